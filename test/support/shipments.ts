import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from './scratch.ts';

/** Shipment rows as a compliance team hands them over, and files of them. */
export function shipmentRow(
  key: string,
  supplierId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    key,
    activityType: 'IMPORT',
    countryOfActivity: 'NL',
    components: [
      { hsn: '18010000', quantity: 1250, unit: 'KGM', description: 'cocoa beans', supplierBusinessId: supplierId },
    ],
    ...overrides,
  };
}

/** Writes a shipments file in a directory of its own, removed when the calling test finishes. */
export function writeShipments(
  rows: ReadonlyArray<Record<string, unknown> | string>,
  format: 'ndjson' | 'json-array' = 'ndjson',
): string {
  const dir = scratchDir('shipments');
  const path = join(dir, format === 'ndjson' ? 'shipments.ndjson' : 'shipments.json');
  const text =
    format === 'ndjson'
      ? rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')
      : `[\n${rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join(',\n')}\n]`;
  writeFileSync(path, text);
  return path;
}
