import { describe, it, expect } from 'vitest';
import { IdCollector, checkSurveyResponseId, parseIdLines } from '../../../../domain/pdfs/ids.ts';

const A = '3f2b8c1e-9a4d-4c7e-8b21-5d6f0a9e1c34';
const B = '00000000-0000-4000-8000-00000000000b';

describe('survey response ids', () => {
  it('accepts UUIDs in any case and keeps them in lower case', () => {
    expect(checkSurveyResponseId(A)).toEqual({ id: A });
    expect(checkSurveyResponseId(A.toUpperCase())).toEqual({ id: A });
  });

  it('names the id and the rule when it is not one', () => {
    expect(checkSurveyResponseId('sr-42')).toEqual({
      error:
        '"sr-42" is not a survey response id: expected a UUID: 8-4-4-4-12 hexadecimal digits, e.g. 3f2b8c1e-9a4d-4c7e-8b21-5d6f0a9e1c34',
    });
    expect(checkSurveyResponseId(`${A}0`)).toHaveProperty('error');
    expect(checkSurveyResponseId(`{${A}}`)).toHaveProperty('error');
    expect(checkSurveyResponseId(A.replace(/-/g, ''))).toHaveProperty('error');
    expect((checkSurveyResponseId('x'.repeat(500)) as { error: string }).error).toMatch(/^"x{80}…" is not/);
  });

  it('reads a file: one id per line, blank lines and # comments ignored, line numbers for the bad ones', () => {
    const text = [
      '# survey responses of Q3',
      '',
      `  ${A}  `,
      `${B} # supplier 2`,
      'not-an-id',
      `${A.toUpperCase()}`,
      '\t',
      `${B}x`,
    ].join('\r\n');
    const list = parseIdLines(text);
    expect(list.ids).toEqual([A, B]);
    expect(list.repeated).toBe(1);
    expect(list.invalid).toEqual([
      { line: 5, text: 'not-an-id', error: expect.stringContaining('"not-an-id" is not a survey response id') },
      { line: 8, text: `${B}x`, error: expect.stringContaining('expected a UUID') },
    ]);
  });

  it('ignores a byte-order mark on the first line', () => {
    expect(parseIdLines(`\uFEFF${A}\n`).ids).toEqual([A]);
  });

  it('collects arguments by position', () => {
    const c = new IdCollector();
    for (const [i, text] of ['nope', A].entries()) c.add(text, i + 1);
    expect(c.result()).toEqual({
      ids: [A],
      repeated: 0,
      invalid: [{ line: 1, text: 'nope', error: expect.any(String) }],
    });
  });
});
