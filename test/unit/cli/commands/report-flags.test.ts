import { describe, it, expect } from 'vitest';
import { checkReportFlags } from '../../../../cli/commands/report.ts';
import { UsageError } from '../../../../cli/usage.ts';

describe('ddsync report flags', () => {
  it('refuse an --out that is a file and an empty or unprintable --supplier, naming the flag and the rule', () => {
    expect(() => checkReportFlags({ out: 'package.json' })).toThrow(
      new UsageError('--out must be a folder (or a path to create one), got a file: "package.json"'),
    );
    expect(() => checkReportFlags({ out: '.', supplier: '  ' })).toThrow(/--supplier must be a supplier business id/);
    expect(() => checkReportFlags({ out: '.', supplier: 'a\nb' })).toThrow(/--supplier must be/);
    expect(checkReportFlags({ out: 'not/yet/there', supplier: ' S1 ' })).toMatchObject({ supplierId: 'S1' });
  });
});
