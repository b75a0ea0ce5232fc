/**
 * Workflow histories as plain JSON and back, in the shape the SDK's replay encodes (numbers for
 * 64-bit integers and enums, bytes as base64). Not Temporal's own JSON format: historyToJSON and
 * historyFromJSON trip over the two copies of protobufjs installed here.
 */
const isLong = (v: object): v is { toNumber(): number } =>
  'low' in v && 'high' in v && 'unsigned' in v && typeof (v as { toNumber?: unknown }).toNumber === 'function';

/** A decoded history (what fetchHistory() returns) as JSON-safe values: own fields only, Longs as numbers. */
export function historyToPlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') };
  if (isLong(value)) {
    const n = value.toNumber();
    if (!Number.isSafeInteger(n)) throw new Error(`a 64-bit value past 2^53 in a history: ${String(value)}`);
    return n;
  }
  if (Array.isArray(value)) return value.map(historyToPlain);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) out[k] = historyToPlain(v);
  return out;
}

/** The inverse of historyToPlain: base64 back to bytes. */
export function historyFromPlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(historyFromPlain);
  const bytes = (value as { $bytes?: unknown }).$bytes;
  if (typeof bytes === 'string') return Buffer.from(bytes, 'base64');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, historyFromPlain(v)]));
}
