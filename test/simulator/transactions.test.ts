import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'svix';
import { startClient, startReceiver, until, type Client } from './helpers.ts';

interface Tx {
  id: string;
  customId: string;
  status: string;
  referenceNumber: string | null;
  verificationNumber: string | null;
  errorReason: string | null;
  components: Array<{ id: string }>;
}

describe('transactions', () => {
  let c: Client;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let supplierId: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    c = await startClient({
      timeScale: 0.00002,
      transactionErrorRatio: 0,
      resolve: { 'hooks.ddsync.test': `127.0.0.1:${receiver.port}` },
    });
    supplierId = c.sim.control.suppliers()[0]?.id ?? '';
  });
  afterAll(async () => {
    await c.sim.close();
    await receiver.close();
  });
  const component = (): Record<string, unknown> => ({
    hsn: '18010000',
    quantity: 1200.5,
    unit: 'KGM',
    supplierBusinessId: supplierId,
  });

  it('validates the create body and names every bad field', async () => {
    const res = await c.send('POST', '/transactions', {
      activityType: 'SMUGGLE',
      countryOfActivity: 'germany',
      components: [{ hsn: '18', quantity: 0, unit: 'KG', supplierBusinessId: 'nobody' }],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string[]; error: string };
    expect(body.error).toBe('Bad Request');
    for (const field of [
      'activityType',
      'countryOfActivity',
      'components.0.hsn',
      'components.0.quantity',
      'components.0.unit',
      'components.0.supplierBusinessId',
    ]) {
      expect(
        body.message.some((m) => m.startsWith(field)),
        field,
      ).toBe(true);
    }
  });

  it("answers 400 with the contract rule's own words (schema/upstream/transaction-rules.ts)", async () => {
    const refused = async (body: Record<string, unknown>): Promise<string[]> => {
      const res = await c.send('POST', '/transactions', {
        activityType: 'IMPORT',
        countryOfActivity: 'DE',
        components: [component()],
        ...body,
      });
      expect(res.status).toBe(400);
      return ((await res.json()) as { message: string[] }).message;
    };
    expect(await refused({ components: [{ ...component(), hsn: '18010' }] })).toEqual([
      'components.0.hsn: an HS code of 4, 6, 8 or 10 digits, got "18010"',
    ]);
    expect((await refused({ components: [{ ...component(), hsn: '8471' }] }))[0]).toMatch(
      /^components\.0\.hsn: HS chapter 84 is not a chapter of the regulated commodities/,
    );
    expect(await refused({ countryOfActivity: 'GB' })).toEqual([
      'countryOfActivity: an EU country as an ISO 3166-1 alpha-2 code in upper case (e.g. DE, NL), got "GB"',
    ]);
    expect(
      await refused({
        components: [{ ...component(), ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' }] }],
      }),
    ).toEqual([
      'components.0: give either ddsReferences (goods already declared) or supplierBusinessId / supplierBusinessIds (goods of an internal supplier), not both, not neither',
    ]);
    const ok = await c.send('POST', '/transactions', {
      activityType: 'IMPORT',
      countryOfActivity: 'XI',
      components: [{ ...component(), hsn: '4403991000' }],
    });
    expect(ok.status).toBe(201);
  });

  it('goes DRAFT → TO_SUBMIT → SUBMITTED → AVAILABLE, notifying a signed webhook at each change', async () => {
    const hookRes = await c.send('POST', '/webhooks', {
      url: 'https://hooks.ddsync.test/eudr',
      events: ['transaction.updated'],
    });
    const hook = (await hookRes.json()) as { id: string };
    const secret = (await (await c.get(`/webhooks/${hook.id}/secret`)).json()) as string;
    const created = await c.send('POST', '/transactions', {
      customId: 'ship-1',
      activityType: 'IMPORT',
      countryOfActivity: 'DE',
      components: [component()],
      unknownField: 1,
    });
    expect(created.status).toBe(201);
    const tx = (await created.json()) as Tx & Record<string, unknown>;
    expect(tx).toMatchObject({ customId: 'ship-1', status: 'DRAFT', referenceNumber: null, verificationNumber: null });
    expect(tx).not.toHaveProperty('unknownField');
    expect((await c.send('PATCH', `/transactions/${tx.id}`, { countryOfActivity: 'NL' })).status).toBe(200);
    const added = await c.send('POST', `/transactions/${tx.id}/components`, {
      hsn: '1801',
      quantity: 3,
      unit: 'TNE',
      ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' }],
    });
    expect(added.status).toBe(201);
    const submit = await c.send('PUT', `/transactions/${tx.id}/submit`);
    expect(submit.status).toBe(202);
    expect(((await submit.json()) as Tx).status).toBe('TO_SUBMIT');
    expect((await c.send('PUT', `/transactions/${tx.id}/submit`)).status).toBe(409);
    expect((await c.send('PATCH', `/transactions/${tx.id}`, { countryOfActivity: 'BE' })).status).toBe(409);
    expect((await c.send('DELETE', `/transactions/${tx.id}`)).status).toBe(409);
    const available = await until(async () => {
      const t = await c.json<Tx>(`/transactions/${tx.id}`);
      return t.status === 'AVAILABLE' ? t : undefined;
    });
    expect(available.referenceNumber).toMatch(/^\d{2}NL[A-Z0-9]{10}$/);
    expect(available.verificationNumber).toMatch(/^[A-Z0-9]{8}$/);
    const hooks = await receiver.next(3);
    const statuses = hooks.map((h) => {
      const payload = new Webhook(secret).verify(h.body, {
        'svix-id': String(h.headers['svix-id']),
        'svix-timestamp': String(h.headers['svix-timestamp']),
        'svix-signature': String(h.headers['svix-signature']),
      }) as { data: { id: string; status: string }; event: string };
      expect(payload.event).toBe('transaction.updated');
      expect(payload.data.id).toBe(tx.id);
      expect(h.headers.host).toBe('hooks.ddsync.test');
      expect(h.path).toBe('/eudr');
      return payload.data.status;
    });
    expect(statuses).toEqual(['TO_SUBMIT', 'SUBMITTED', 'AVAILABLE']);
    const listed = await c.json<Array<Tx & { components?: Array<Record<string, unknown>> }>>(
      '/transactions?includes=components,components.ddsReferences',
    );
    expect(listed.find((t) => t.id === tx.id)?.components).toHaveLength(2);
    expect((await c.json<Array<Record<string, unknown>>>('/transactions'))[0]).not.toHaveProperty('components');
    expect(c.sim.control.transactionCountsByCustomId()).toMatchObject({ 'ship-1': 1 });
  });

  it('ends in ERROR with a reason when the EU system rejects, deterministically', async () => {
    c.sim.control.setTransactionErrorRatio(1);
    const tx = (await (
      await c.send('POST', '/transactions', {
        activityType: 'EXPORT',
        countryOfActivity: 'FR',
        components: [component()],
      })
    ).json()) as Tx;
    expect(tx.customId).toMatch(/[0-9a-f-]{36}/);
    await c.send('PUT', `/transactions/${tx.id}/submit`);
    const failed = await until(async () => {
      const t = await c.json<Tx>(`/transactions/${tx.id}`);
      return t.status === 'ERROR' ? t : undefined;
    });
    expect(failed.errorReason).toMatch(/rejected/);
    expect(failed.referenceNumber).toBeNull();
    c.sim.control.setTransactionErrorRatio(0);
  });

  it('modifies and deletes components and transactions only while DRAFT', async () => {
    const tx = (await (
      await c.send('POST', '/transactions', {
        activityType: 'TRADE',
        countryOfActivity: 'IT',
        components: [component()],
      })
    ).json()) as Tx;
    const componentId = tx.components[0]?.id ?? '';
    expect((await c.send('PATCH', `/components/${componentId}`, { quantity: -1 })).status).toBe(400);
    expect((await c.send('PATCH', `/components/${componentId}`, { quantity: 5 })).status).toBe(200);
    expect((await c.send('DELETE', `/components/${componentId}`)).status).toBe(204);
    expect((await c.send('DELETE', `/transactions/${tx.id}`)).status).toBe(204);
    expect((await c.get(`/transactions/${tx.id}`)).status).toBe(404);
  });

  it('answers 403 when the business is not entitled', async () => {
    const denied = await startClient({ entitlements: { canManageTransactions: false } });
    const res = await denied.send('POST', '/transactions', { activityType: 'IMPORT', countryOfActivity: 'DE' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    expect((await denied.get('/transactions')).status).toBe(403);
    denied.sim.control.setEntitlements({ canManageTransactions: true });
    expect((await denied.get('/transactions')).status).toBe(200);
    await denied.sim.close();
  });
});
