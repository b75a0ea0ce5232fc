import { describe, it, expect } from 'vitest';
import { addCounts, emptyCounts, mergeReplayCounts, rowsWritten } from '../../../../warehouse/refresh/counts.ts';
import { storable, toJsonRecordset } from '../../../../warehouse/refresh/json-recordset.ts';
import { callerOf, toNetwork } from '../../../../warehouse/refresh/network-rows.ts';
import type { BusinessConnection } from '../../../../schema/upstream.ts';

describe('counts', () => {
  it("keeps a replayed page from counting its first attempt's writes twice", () => {
    const first = emptyCounts();
    addCounts(first, 'plots', { inserted: 500 });
    const replay = emptyCounts();
    addCounts(replay, 'plots', { unchanged: 499, updated: 1 });
    expect(mergeReplayCounts(first, replay)).toEqual({
      plots: { inserted: 500, updated: 1, unchanged: 0, deleted: 0 },
    });
    expect(rowsWritten(mergeReplayCounts(first, replay))).toBe(501);
  });
});

describe('JSON recordsets', () => {
  it('splices JSON text columns raw and stores what Postgres refuses as U+FFFD', () => {
    const text = toJsonRecordset(
      [
        { id: 'a', name: 'x\u0000y', geometry: '{"type":"Polygon"}' },
        { id: 'b', name: '\ud800', geometry: null },
      ],
      ['geometry'],
    );
    expect(JSON.parse(text)).toEqual([
      { id: 'a', name: 'x\ufffdy', geometry: { type: 'Polygon' } },
      { id: 'b', name: '\ufffd', geometry: null },
    ]);
    // Escaped backslashes followed by "u0000" are text, not an escape.
    expect(storable(JSON.stringify(['\\u0000']))).toBe(JSON.stringify(['\\u0000']));
  });
});

describe('network', () => {
  const business = (id: string) => ({ id, name: id });
  const link = (id: string, source: string, target: string, plotsCount = 1): BusinessConnection => ({
    id,
    sourceBusiness: business(source),
    targetBusiness: business(target),
    plotsCount,
  });

  it('finds the calling business as the one in every connection, and the supplier as the other side', () => {
    const suppliers = [link('c1', 's1', 'me'), link('c2', 's2', 'me')];
    const buyers = [link('c3', 'me', 'b1')];
    expect(callerOf(suppliers, buyers)).toBe('me');
    const network = toNetwork(suppliers, buyers);
    expect(network.suppliers.map((s) => s.id)).toEqual(['s1', 's2']);
    expect(network.connections.map((c) => [c.id, c.partner_business_id, c.role])).toEqual([
      ['c1', 's1', 'supplier'],
      ['c2', 's2', 'supplier'],
      ['c3', 'b1', 'buyer'],
    ]);
    expect(network.businesses.find((b) => b.id === 'me')?.is_caller).toBe(true);
  });

  it('falls back to the target of a lone supplier link, and reports a connection without a business', () => {
    expect(callerOf([link('c1', 's1', 'me')], [])).toBe('me');
    const network = toNetwork([{ id: 'broken', sourceBusiness: null, targetBusiness: business('me') }], []);
    expect(network.connections).toEqual([]);
    expect(network.issues).toEqual([
      expect.objectContaining({ recordId: 'broken', field: 'sourceBusiness', action: 'skipped' }),
    ]);
  });
});

describe('values', () => {
  it('passes canonical UTC timestamps through and normalises or refuses the rest', async () => {
    const { timestampOrNull } = await import('../../../../domain/values.ts');
    const issues: Array<{ field: string; rule: string }> = [];
    expect(timestampOrNull('2024-02-29T10:11:12.345Z', 'a', issues)).toBe('2024-02-29T10:11:12.345Z');
    expect(timestampOrNull('2024-01-02T03:04:05+02:00', 'b', issues)).toBe('2024-01-02T01:04:05.000Z');
    // Not a day of the calendar: Date would roll it over to March 1st.
    expect(timestampOrNull('2023-02-29T00:00:00Z', 'c', issues)).toBeNull();
    expect(timestampOrNull('not a time', 'd', issues)).toBeNull();
    expect(issues).toEqual([
      { field: 'c', rule: 'expected an ISO 8601 date-time' },
      { field: 'd', rule: 'expected an ISO 8601 date-time' },
    ]);
  });
});

describe('page hash', () => {
  it('is the same over the body as received and over its decoded text, so stored hashes stay valid', async () => {
    const { sourcePageHash } = await import('../../../../warehouse/refresh/plot-fingerprint.ts');
    const text = '[{"id":"p-1","name":"Côte d’Ivoire 𝄞","geometry":null}]';
    const bytes = new TextEncoder().encode(text);
    expect(sourcePageHash(bytes)).toBe(sourcePageHash(text));
    // As the client collects a page: chunks split anywhere (inside a character too) into one lent buffer.
    const { PageBufferPool } = await import('../../../../upstream/page-buffers.ts');
    const body = new PageBufferPool().body(bytes.length);
    for (const chunk of [bytes.subarray(0, 7), bytes.subarray(7, 23), bytes.subarray(23)]) body.append(chunk);
    expect(sourcePageHash(body.bytes())).toBe(sourcePageHash(text));
    expect(sourcePageHash(new TextEncoder().encode(`${text} `))).not.toBe(sourcePageHash(text));
  });
});
