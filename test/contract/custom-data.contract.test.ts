import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { RequestValidationError, serviceFacts } from '../../upstream/index.ts';
import type { Plot } from '../../schema/upstream.ts';

/**
 * The contract's eight customData rules, each on a real call against the simulator:
 * 1-5 refused before sending, 6 reserved keys stripped, 7 responses unchanged (server-owned keys
 * included), 8 visible only to the record's owner.
 */
describe('contract: customData rules', () => {
  let h: Harness;
  let connectionId: string;

  beforeAll(async () => {
    h = await startHarness({ layout: { ownPlots: 4, suppliers: [{ plots: 6 }, { plots: 2 }] } });
    connectionId = h.sim.control.suppliers()[1]!.connectionId;
  });
  afterAll(() => h.close());

  const tenKeys = (prefix = 'k'): Record<string, number> =>
    Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${prefix}${i}`, i]));

  describe('rules 1-5: refused before sending, naming the rule and the field', () => {
    const cases: Array<[string, () => Record<string, unknown>, RegExp]> = [
      ['rule 1: at most 10 keys', () => ({ ...tenKeys(), k10: 10 }), /customData: rule 1: 11 keys, at most 10/],
      [
        'rule 2: key length at most 255',
        () => ({ ['k'.repeat(256)]: 1 }),
        /customData\.k{20}…: rule 2: key is 256 characters/,
      ],
      [
        'rule 3: string values at most 255',
        () => ({ note: 'v'.repeat(256) }),
        /customData\.note: rule 3: string value is 256 characters/,
      ],
      ['rule 4: no nested objects', () => ({ nested: { a: 1 } }), /customData\.nested: rule 4: .*nested object/],
      ['rule 4: no arrays', () => ({ list: [1, 2] }), /customData\.list: rule 4: .*array/],
      ['rule 4: no null', () => ({ gone: null }), /customData\.gone: rule 4: .*null/],
      [
        'rule 5: __proto__',
        () => JSON.parse('{"__proto__": "x"}') as Record<string, unknown>,
        /customData\.__proto__: rule 5/,
      ],
      ['rule 5: constructor', () => ({ constructor: 'x' }), /customData\.constructor: rule 5/],
      ['rule 5: prototype', () => ({ prototype: 1 }), /customData\.prototype: rule 5/],
    ];
    for (const [name, data, message] of cases) {
      it(name, async () => {
        const before = h.api.stats.requests;
        const calls = [
          () => h.api.updateConnectionCustomData(connectionId, data() as Record<string, string>),
          () =>
            h.api.createBusinessInvitation({
              email: 'rules@example.com',
              customData: data() as Record<string, string>,
            }),
          () => h.api.updateBusinessInvitation('any-id', { customData: data() as Record<string, string> }),
        ];
        for (const call of calls) {
          const error = await rejectionOf(call());
          expect(error).toBeInstanceOf(RequestValidationError);
          expect(error.message).toMatch(message);
        }
        expect(h.api.stats.requests).toBe(before);
      });
    }

    it('accepts values exactly at the limits, counting code points as the service does', async () => {
      const emoji = '🌱'.repeat(255); // 255 code points, 510 UTF-16 units
      const data = {
        ['k'.repeat(255)]: 'v'.repeat(255),
        [`${'é'.repeat(250)}x`]: emoji,
        ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`n${i}`, i % 2 === 0 ? i : i % 3 === 0])),
      };
      expect(Object.keys(data)).toHaveLength(10);
      const updated = await h.api.updateConnectionCustomData(connectionId, data);
      expect(updated.customData).toEqual(data);
      expect((await h.api.listSuppliers()).find((c) => c.id === connectionId)?.customData).toEqual(data);
    });
  });

  describe('rule 6: reserved server-owned keys are stripped, not stored', () => {
    it('the client and the simulator agree on the reserved namespace', () => {
      for (const key of ['_source', '$internal']) expect(serviceFacts.RESERVED_CUSTOM_DATA_KEY.test(key)).toBe(true);
      expect(serviceFacts.RESERVED_CUSTOM_DATA_KEY.test('sim.internal')).toBe(false);
    });

    it('strips them on a connection update; they do not count against rule 1', async () => {
      const before = h.api.stats.requests;
      const updated = await h.api.updateConnectionCustomData(connectionId, {
        ...tenKeys(),
        _internal: 'x',
        $owner: 'y',
      });
      expect(h.api.stats.requests - before).toBe(1);
      expect(updated.customData).toEqual(tenKeys());
      const stored = (await h.api.listSuppliers()).find((c) => c.id === connectionId)?.customData;
      expect(stored).toEqual(tenKeys());
      expect(stored).not.toHaveProperty('_internal');
    });

    it('strips them on an invitation; the service keeps its own key, which the client cannot forge', async () => {
      const inv = await h.api.createBusinessInvitation({
        email: 'strip@example.com',
        customData: { ref: 'R-1', _source: 'forged', $x: 1 },
      });
      const stored = h.sim.control.invitations().find((i) => i.id === inv.id)!.customData;
      expect(stored).toEqual({ ref: 'R-1', _source: 'api' });
      const patched = await h.api.updateBusinessInvitation(inv.id, {
        customData: { ref: 'R-2', _source: 'forged-again' },
      });
      expect(patched.customData).toEqual({ ref: 'R-2', _source: 'api' });
      expect(h.sim.control.invitations().find((i) => i.id === inv.id)!.customData).toEqual({
        ref: 'R-2',
        _source: 'api',
      });
    });

    it('the service strips them too when a caller sends them (raw request)', async () => {
      const token = await h.sim.control.mintToken(3600);
      const res = await fetch(`${h.sim.url}/business-invitations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'raw@example.com', customData: { ref: 'raw', _source: 'forged', $y: 2 } }),
      });
      expect(res.status).toBe(201);
      const id = ((await res.json()) as { id: string }).id;
      expect(h.sim.control.invitations().find((i) => i.id === id)!.customData).toEqual({ ref: 'raw', _source: 'api' });
    });
  });

  describe('rule 7: responses are returned unchanged, server-owned keys included', () => {
    it("returns an 11-key customData (10 client keys + the server's) without applying rules 1-6 to it", async () => {
      const inv = await h.api.createBusinessInvitation({ email: 'rule7@example.com', customData: tenKeys() });
      expect(inv.customData).toEqual({ ...tenKeys(), _source: 'api' });
      expect(Object.keys(inv.customData!)).toHaveLength(11);
      const updated = await h.api.updateBusinessInvitation(inv.id, { status: 'CANCELLED' });
      expect(updated.customData).toEqual({ ...tenKeys(), _source: 'api' });
    });

    it('returns response customData unchanged even where it breaks the input rules', async () => {
      // The owner's plot customData as the service holds it: long values and a server-owned key.
      const own: Plot[] = [];
      for await (const p of h.api.ownPlots()) own.push(p);
      const target = own[0]!;
      const odd = { _importedBy: 'bulk-upload', long: 'x'.repeat(400), ...tenKeys('m') };
      h.sim.control.editPlot(target.id, { customData: odd });
      const reread: Plot[] = [];
      for await (const p of h.api.ownPlots()) reread.push(p);
      expect(reread.find((p) => p.id === target.id)?.customData).toEqual(odd);
    });
  });

  describe('rule 8: customData is visible only to the owners of the record', () => {
    it('own plots show their customData; supplier plots show {}', async () => {
      const own: Plot[] = [];
      for await (const p of h.api.ownPlots()) own.push(p);
      expect(own).toHaveLength(4);
      const withData = own.filter((p) => p.customData && Object.keys(p.customData).length > 0);
      expect(withData.length).toBeGreaterThanOrEqual(3);
      const supplier = h.sim.control.suppliers()[0]!.id;
      const theirs: Plot[] = [];
      for await (const p of h.api.supplierPlots(supplier)) theirs.push(p);
      expect(theirs.length).toBeGreaterThan(0);
      // Even after the owner gives a plot customData, the buyer sees {}.
      h.sim.control.editPlot(theirs[1]!.id, { customData: { ownersOnly: 'secret-ish' } });
      const again = await h.api.getSupplierPlotsPage(supplier, 1);
      expect(again.plots.map((p) => p.customData)).toEqual(again.plots.map(() => ({})));
      expect(again.plots.some((p) => p.id === theirs[1]!.id)).toBe(true);
    });

    it('connections show customData to the buyer side only', async () => {
      const buyers = await h.api.listBuyers();
      expect(buyers.length).toBeGreaterThan(0);
      expect(buyers.map((c) => c.customData)).toEqual(buyers.map(() => ({})));
      const suppliers = await h.api.listSuppliers();
      expect(suppliers.some((c) => c.customData && Object.keys(c.customData).length > 0)).toBe(true);
    });
  });
});
