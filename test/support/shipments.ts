import { writeFileSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Shipment rows as a compliance team hands them over, and files of them. */
export function shipmentRow(key: string, supplierId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key, activityType: 'IMPORT', countryOfActivity: 'NL',
    components: [{ hsn: '18010000', quantity: 1250, unit: 'KGM', description: 'cocoa beans', supplierBusinessId: supplierId }],
    ...overrides,
  };
}

export function writeShipments(rows: ReadonlyArray<Record<string, unknown> | string>, format: 'ndjson' | 'json-array' = 'ndjson'): string {
  const dir = mkdtempSync(join(resolve('.ddsync'), 'shipments-'));
  const path = join(dir, format === 'ndjson' ? 'shipments.ndjson' : 'shipments.json');
  const text = format === 'ndjson'
    ? rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')
    : `[\n${rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join(',\n')}\n]`;
  writeFileSync(path, text);
  return path;
}
