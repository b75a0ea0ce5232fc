import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shipmentRow, writeShipments } from '../support/shipments.ts';

// Tests run in order within a file: the second sees what the first left.
describe('files tests make are removed when their test finishes', () => {
  let path = '';
  it("a shipments file is written in the run's scratch space", () => {
    path = writeShipments([shipmentRow('k-1', 'supplier-1')]);
    expect(path).toMatch(/\/\.ddsync\/test\/run-[^/]+\/scratch\/shipments-[^/]+\/shipments\.ndjson$/);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ key: 'k-1' });
  });

  it('and is gone, with its directory, once that test finished', () => {
    expect(path).not.toBe('');
    expect(existsSync(dirname(path))).toBe(false);
  });
});
