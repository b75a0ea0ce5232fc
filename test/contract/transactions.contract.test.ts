import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { recordingFetch } from './recording-fetch.ts';
import {
  BadRequestError,
  ConflictError,
  NotEntitledError,
  NotFoundError,
  RequestValidationError,
  type UpstreamClient,
} from '../../upstream/index.ts';
import type { ComponentInput, CreateTransactionInput, Transaction } from '../../schema/upstream.ts';

const REFERENCE = /^\d{2}[A-Z]{2}[A-Z0-9]{10}$/;
const VERIFICATION = /^[A-Z0-9]{8}$/;
const DDS_REF = { id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' };

/** Polls GET /transactions/{id} until the status is one of `until`, bounded by count (no fixed sleeps). */
async function follow(
  api: UpstreamClient,
  id: string,
  until: readonly string[],
  maxPolls = 2_000,
): Promise<{ tx: Transaction; seen: string[] }> {
  const seen: string[] = [];
  for (let i = 0; i < maxPolls; i++) {
    const tx = await api.getTransaction(id);
    if (seen.at(-1) !== tx.status) seen.push(tx.status);
    if (until.includes(tx.status)) return { tx, seen };
    await new Promise((r) => setTimeout(r, 2)); // poll interval inside a bounded loop
  }
  throw new Error(
    `transaction ${id} did not reach ${until.join('/')} within ${maxPolls} polls (seen ${seen.join(' → ')})`,
  );
}

describe('contract: transactions', () => {
  /** Real-time clock (minutes of delay): a submitted transaction stays in TO_SUBMIT for the whole file. */
  let slow: Harness;
  /** Scaled clock: TO_SUBMIT → SUBMITTED → AVAILABLE | ERROR within milliseconds. */
  let fast: Harness;
  let supplierId: string;
  const supplierComponent = (over: Partial<ComponentInput> = {}): ComponentInput =>
    ({ hsn: '18010000', quantity: 1200.5, unit: 'KGM', supplierBusinessId: supplierId, ...over }) as ComponentInput;
  const draft = (customId: string, over: Partial<CreateTransactionInput> = {}): CreateTransactionInput => ({
    customId,
    activityType: 'IMPORT',
    countryOfActivity: 'DE',
    components: [supplierComponent()],
    ...over,
  });

  beforeAll(async () => {
    slow = await startHarness({
      layout: { ownPlots: 2, suppliers: [{ plots: 5 }, { plots: 3 }] },
      transactionErrorRatio: 0,
    });
    fast = await startHarness({
      layout: { ownPlots: 2, suppliers: [{ plots: 5 }, { plots: 3 }] },
      timeScale: 0.00001,
      transactionErrorRatio: 0,
    });
    supplierId = slow.sim.control.suppliers()[0]!.id;
    expect(fast.sim.control.suppliers()[0]!.id).toBe(supplierId); // same seed, same layout
  });
  afterAll(async () => {
    await slow?.close();
    await fast?.close();
  });

  it('creates a DRAFT honouring customId, and generates one when absent', async () => {
    const tx = await slow.api.createTransaction(draft('ship-create-1', { customData: { po: 'PO-1' } }));
    expect(tx).toMatchObject({
      customId: 'ship-create-1',
      status: 'DRAFT',
      activityType: 'IMPORT',
      countryOfActivity: 'DE',
      referenceNumber: null,
      verificationNumber: null,
    });
    expect(tx.customData).toEqual({ po: 'PO-1' });
    expect(tx.components).toHaveLength(1);
    expect(tx.components![0]).toMatchObject({ hsn: '18010000', quantity: 1200.5, unit: 'KGM' });
    expect(slow.sim.control.transactions().find((t) => t.id === tx.id)?.customId).toBe('ship-create-1');
    const generated = await slow.api.createTransaction({ activityType: 'EXPORT', countryOfActivity: 'NL' });
    expect(typeof generated.customId).toBe('string');
    expect(generated.customId).not.toBe('');
    expect(generated.status).toBe('DRAFT');
  });

  it('lists transactions, with components and their DDS references only when included', async () => {
    const tx = await slow.api.createTransaction(
      draft('ship-list-1', {
        components: [supplierComponent(), { hsn: '1801', quantity: 3, unit: 'TNE', ddsReferences: [DDS_REF] }],
      }),
    );
    const plain = (await slow.api.listTransactions()).find((t) => t.id === tx.id)!;
    expect(plain.customId).toBe('ship-list-1');
    expect(plain).not.toHaveProperty('components');
    const withComponents = (await slow.api.listTransactions({ includes: ['components'] })).find((t) => t.id === tx.id)!;
    expect(withComponents.components).toHaveLength(2);
    expect(withComponents.components!.every((c) => !('ddsReferences' in c))).toBe(true);
    const withRefs = (await slow.api.listTransactions({ includes: ['components', 'components.ddsReferences'] })).find(
      (t) => t.id === tx.id,
    )!;
    expect(withRefs.components!.map((c) => c.ddsReferences)).toEqual([[], [DDS_REF]]);
    const before = slow.api.stats.requests;
    const refused = await rejectionOf(slow.api.listTransactions({ includes: ['plots' as 'components'] }));
    expect(refused).toBeInstanceOf(RequestValidationError);
    expect(refused.message).toMatch(/includes/);
    expect(slow.api.stats.requests).toBe(before);
  });

  it('finds a transaction again by customId, and answers undefined for an unknown one', async () => {
    const tx = await slow.api.createTransaction(draft('ship-find-1'));
    const found = await slow.api.findTransactionByCustomId('ship-find-1');
    expect(found?.id).toBe(tx.id);
    expect(await slow.api.findTransactionByCustomId('no-such-custom-id')).toBeUndefined();
  });

  it('reads one transaction with its components; 404 for an unknown id', async () => {
    const tx = await slow.api.createTransaction(draft('ship-get-1'));
    const read = await slow.api.getTransaction(tx.id);
    expect(read).toMatchObject({ id: tx.id, customId: 'ship-get-1', status: 'DRAFT' });
    expect(read.components!.map((c) => c.id)).toEqual(tx.components!.map((c) => c.id));
    expect(await rejectionOf(slow.api.getTransaction('00000000-0000-4000-8000-00000000dead'))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('patches a DRAFT and adds, patches and deletes its components', async () => {
    const tx = await slow.api.createTransaction(draft('ship-edit-1'));
    const patched = await slow.api.updateTransaction(tx.id, { countryOfActivity: 'NL', activityType: 'TRADE' });
    expect(patched).toMatchObject({
      id: tx.id,
      countryOfActivity: 'NL',
      activityType: 'TRADE',
      status: 'DRAFT',
      customId: 'ship-edit-1',
    });

    const added = await slow.api.addComponent(tx.id, {
      hsn: '1801',
      quantity: 3,
      unit: 'TNE',
      ddsReferences: [DDS_REF],
    });
    expect(added).toMatchObject({ hsn: '1801', quantity: 3, unit: 'TNE', ddsReferences: [DDS_REF] });
    const changed = await slow.api.updateComponent(added.id, { quantity: 4.25, description: 'second lot' });
    expect(changed).toMatchObject({ id: added.id, quantity: 4.25, description: 'second lot', unit: 'TNE' });
    expect((await slow.api.getTransaction(tx.id)).components!.map((c) => [c.id, c.quantity])).toEqual([
      [tx.components![0]!.id, 1200.5],
      [added.id, 4.25],
    ]);

    await slow.api.deleteComponent(tx.components![0]!.id);
    expect((await slow.api.getTransaction(tx.id)).components!.map((c) => c.id)).toEqual([added.id]);
    expect(await rejectionOf(slow.api.deleteComponent(tx.components![0]!.id))).toBeInstanceOf(NotFoundError);
  });

  it('answers 201 on create, 202 on submit and 204 on deletes', async () => {
    const rec = recordingFetch();
    const api = slow.client({ fetch: rec.fetch });
    const tx = await api.createTransaction(draft('ship-status-1'));
    expect(rec.last('POST', /^\/transactions$/)?.status).toBe(201);
    const component = await api.addComponent(tx.id, supplierComponent());
    expect(rec.last('POST', /\/components$/)?.status).toBe(201);
    await api.deleteComponent(component.id);
    expect(rec.last('DELETE', /^\/components\//)?.status).toBe(204);
    await api.submitTransaction(tx.id);
    expect(rec.last('PUT', /\/submit$/)?.status).toBe(202);
    const other = await api.createTransaction(draft('ship-status-2'));
    await api.deleteTransaction(other.id);
    expect(rec.last('DELETE', /^\/transactions\//)?.status).toBe(204);
  });

  it('deletes a DRAFT (then it is gone)', async () => {
    const tx = await slow.api.createTransaction(draft('ship-delete-1'));
    await slow.api.deleteTransaction(tx.id);
    expect(await rejectionOf(slow.api.getTransaction(tx.id))).toBeInstanceOf(NotFoundError);
    expect(await slow.api.findTransactionByCustomId('ship-delete-1')).toBeUndefined();
  });

  it('submits to TO_SUBMIT; then every modification and a second submit are refused with ConflictError', async () => {
    const tx = await slow.api.createTransaction(draft('ship-submit-1'));
    const componentId = tx.components![0]!.id;
    await slow.api.submitTransaction(tx.id);
    const submitted = await slow.api.getTransaction(tx.id);
    expect(submitted.status).toBe('TO_SUBMIT');
    expect(submitted.referenceNumber ?? null).toBeNull();
    expect(submitted.verificationNumber ?? null).toBeNull();

    const refusals = [
      () => slow.api.submitTransaction(tx.id),
      () => slow.api.updateTransaction(tx.id, { countryOfActivity: 'BE' }),
      () => slow.api.deleteTransaction(tx.id),
      () => slow.api.addComponent(tx.id, supplierComponent()),
      () => slow.api.updateComponent(componentId, { quantity: 1 }),
      () => slow.api.deleteComponent(componentId),
    ];
    for (const refusal of refusals) {
      const error = await rejectionOf(refusal());
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.status).toBe(409);
      expect(error.retryable).toBe(false);
      expect(String(error.serviceMessage)).toMatch(/TO_SUBMIT/);
    }
    const after = await slow.api.getTransaction(tx.id);
    expect(after).toMatchObject({ status: 'TO_SUBMIT', countryOfActivity: 'DE' });
    expect(after.components!.map((c) => [c.id, c.quantity])).toEqual([[componentId, 1200.5]]);
  });

  it('follows a submitted transaction to AVAILABLE with a DDS reference and verification number', async () => {
    const tx = await fast.api.createTransaction(draft('ship-available-1', { countryOfActivity: 'NL' }));
    await fast.api.submitTransaction(tx.id);
    const { tx: done, seen } = await follow(fast.api, tx.id, ['AVAILABLE', 'ERROR']);
    expect(done.status).toBe('AVAILABLE');
    expect(done.referenceNumber).toMatch(REFERENCE);
    expect(done.referenceNumber!.slice(2, 4)).toBe('NL');
    expect(done.verificationNumber).toMatch(VERIFICATION);
    // Statuses are only ever observed in the contract's order.
    const order = ['TO_SUBMIT', 'SUBMITTED', 'AVAILABLE'];
    expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort((a, b) => a - b));
    expect(seen.every((s) => order.includes(s))).toBe(true);
    // Still refused after validation.
    expect(await rejectionOf(fast.api.submitTransaction(tx.id))).toBeInstanceOf(ConflictError);
  });

  it('follows a transaction the EU system rejects to ERROR, without reference numbers', async () => {
    const h = await startHarness({
      layout: { ownPlots: 1, suppliers: [{ plots: 2 }] },
      timeScale: 0.00001,
      transactionErrorRatio: 1,
    });
    try {
      const supplier = h.sim.control.suppliers()[0]!.id;
      const tx = await h.api.createTransaction({
        customId: 'ship-error-1',
        activityType: 'IMPORT',
        countryOfActivity: 'DE',
        components: [{ hsn: '1801', quantity: 1, unit: 'KGM', supplierBusinessId: supplier }],
      });
      await h.api.submitTransaction(tx.id);
      const { tx: done } = await follow(h.api, tx.id, ['AVAILABLE', 'ERROR']);
      expect(done.status).toBe('ERROR');
      expect(done.referenceNumber ?? null).toBeNull();
      expect(done.verificationNumber ?? null).toBeNull();
      expect((done as unknown as Record<string, unknown>)['errorReason']).toMatch(/rejected/);
      expect(await rejectionOf(h.api.updateTransaction(tx.id, { countryOfActivity: 'NL' }))).toBeInstanceOf(
        ConflictError,
      );
    } finally {
      await h.close();
    }
  });

  it('answers NotEntitledError (not retryable, service message carried) when the business is not entitled', async () => {
    const tx = await slow.api.createTransaction(draft('ship-entitled-1'));
    slow.sim.control.setEntitlements({ canManageTransactions: false });
    try {
      const before = slow.api.stats.requests;
      const calls: Array<() => Promise<unknown>> = [
        () => slow.api.createTransaction(draft('ship-not-entitled')),
        () => slow.api.listTransactions(),
        () => slow.api.getTransaction(tx.id),
        () => slow.api.submitTransaction(tx.id),
        () => slow.api.updateComponent(tx.components![0]!.id, { quantity: 2 }),
      ];
      for (const call of calls) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(NotEntitledError);
        expect(error.name).toBe('NotEntitledError');
        expect(error.status).toBe(403);
        expect(error.retryable).toBe(false);
        expect(error.serviceMessage).toBe('The business is not entitled to manage transactions');
        expect(error.message).toContain('The business is not entitled to manage transactions');
      }
      // Not retried: one request per call.
      expect(slow.api.stats.requests - before).toBe(calls.length);
    } finally {
      slow.sim.control.setEntitlements({ canManageTransactions: true });
    }
    expect((await slow.api.getTransaction(tx.id)).status).toBe('DRAFT');
    expect(slow.sim.control.transactionCountsByCustomId()['ship-not-entitled']).toBeUndefined();
  });

  it('the service refuses a bad activityType, unit and hsn with 400 naming each field', async () => {
    // The client refuses these before sending (next test), so the service's answer is read raw.
    const token = await slow.sim.control.mintToken(3600);
    const res = await fetch(`${slow.sim.url}/transactions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        activityType: 'SMUGGLE',
        countryOfActivity: 'DE',
        components: [{ hsn: 1801, quantity: 1, unit: 'KG', supplierBusinessId: supplierId }],
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string[] };
    for (const field of ['activityType', 'components.0.hsn', 'components.0.unit']) {
      expect(
        body.message.some((m) => m.startsWith(field)),
        field,
      ).toBe(true);
    }
  });

  it("maps the service's 400 to BadRequestError naming the fields, for input only the service can judge", async () => {
    // The client cannot know who is a direct supplier, nor check dates and verification numbers: the service does.
    const error = await rejectionOf(
      slow.api.createTransaction(
        draft('ship-400-1', {
          components: [
            supplierComponent({
              supplierBusinessId: '00000000-0000-4000-8000-00000000beef',
              dateOfProduction: 'last spring',
            }),
            {
              hsn: '1801',
              quantity: 1,
              unit: 'KGM',
              ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: 'lower-case' }],
            },
          ],
        }),
      ),
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    const messages = error.serviceMessages as string[];
    for (const field of [
      'components.0.supplierBusinessId',
      'components.0.dateOfProduction',
      'components.1.ddsReferences',
    ]) {
      expect(
        messages.some((m) => m.startsWith(field)),
        field,
      ).toBe(true);
    }
    expect(slow.sim.control.transactionCountsByCustomId()['ship-400-1']).toBeUndefined();
    const tx = await slow.api.createTransaction(draft('ship-400-2'));
    const badPatch = await rejectionOf(
      slow.api.updateComponent(tx.components![0]!.id, { endDateOfProduction: 'soon' }),
    );
    expect(badPatch).toBeInstanceOf(BadRequestError);
    expect(badPatch.message).toMatch(/endDateOfProduction/);
  });

  it('the client and the service agree on the HS code, country and component-kind rules (one rule, schema/upstream/transaction-rules.ts)', async () => {
    const token = await slow.sim.control.mintToken(3600);
    const raw = async (body: unknown): Promise<{ status: number; message: string }> => {
      const res = await fetch(`${slow.sim.url}/transactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { message?: string | string[] };
      return { status: res.status, message: [answer.message ?? ''].flat().join('; ') };
    };
    const cases: Array<[string, Partial<CreateTransactionInput>, string | null]> = [
      ['4-digit HS code', { components: [supplierComponent({ hsn: '1801' })] }, null],
      ['10-digit HS code', { components: [supplierComponent({ hsn: '4403991000' })] }, null],
      [
        '5-digit HS code',
        { components: [supplierComponent({ hsn: '18010' })] },
        'an HS code of 4, 6, 8 or 10 digits, got "18010"',
      ],
      [
        '9-digit HS code',
        { components: [supplierComponent({ hsn: '180100000' })] },
        'an HS code of 4, 6, 8 or 10 digits',
      ],
      [
        'chapter outside the regulated commodities',
        { components: [supplierComponent({ hsn: '8471' })] },
        'HS chapter 84 is not a chapter of the regulated commodities',
      ],
      ['Northern Ireland', { countryOfActivity: 'XI' }, null],
      [
        'a country outside the EU',
        { countryOfActivity: 'US' },
        'an EU country as an ISO 3166-1 alpha-2 code in upper case (e.g. DE, NL), got "US"',
      ],
      [
        'plots with DDS references',
        { components: [{ hsn: '1801', quantity: 1, unit: 'KGM', ddsReferences: [DDS_REF], plotIds: ['p'] }] },
        'only for internal-supplier components',
      ],
    ];
    for (const [name, over, rule] of cases) {
      const body = draft(`agree-${name.replace(/\W+/g, '-')}`, over);
      const before = slow.api.stats.requests;
      const outcome = await slow.api.createTransaction(body).then(
        () => null,
        (e: unknown) => e,
      );
      const service = await raw({ ...body, customId: `${body.customId}-raw` });
      if (rule === null) {
        expect(outcome, name).toBeNull();
        expect(service.status, name).toBe(201);
      } else {
        expect(outcome, name).toBeInstanceOf(RequestValidationError);
        expect((outcome as Error).message, name).toContain(rule);
        expect(slow.api.stats.requests, name).toBe(before); // refused before sending
        expect(service.status, name).toBe(400);
        expect(service.message, name).toContain(rule);
      }
    }
  });

  it('refuses bad transaction input before sending, naming the field', async () => {
    const tx = await slow.api.createTransaction(draft('ship-validate-1'));
    const before = slow.api.stats.requests;
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [() => slow.api.createTransaction(draft('v1', { activityType: 'SMUGGLE' as 'IMPORT' })), /activityType/],
      [() => slow.api.createTransaction(draft('v2', { countryOfActivity: 'germany' })), /countryOfActivity/],
      [
        () => slow.api.createTransaction(draft('v3', { components: [supplierComponent({ unit: 'KG' as 'KGM' })] })),
        /components\[0\]\.unit/,
      ],
      [
        () => slow.api.createTransaction(draft('v4', { components: [supplierComponent({ hsn: '18' })] })),
        /components\[0\]\.hsn/,
      ],
      [
        () =>
          slow.api.createTransaction(
            draft('v5', { components: [supplierComponent({ hsn: 1801 as unknown as string })] }),
          ),
        /components\[0\]\.hsn/,
      ],
      [
        () => slow.api.createTransaction(draft('v6', { components: [supplierComponent({ quantity: 0 })] })),
        /components\[0\]\.quantity/,
      ],
      [
        () =>
          slow.api.createTransaction(
            draft('v7', { components: [{ ...supplierComponent(), ddsReferences: [DDS_REF] }] }),
          ),
        /either ddsReferences/,
      ],
      [
        () => slow.api.createTransaction(draft('v8', { customData: { nested: { no: 1 } as unknown as string } })),
        /customData\.nested/,
      ],
      [() => slow.api.updateTransaction(tx.id, { activityType: 'BARTER' as 'IMPORT' }), /activityType/],
      [() => slow.api.addComponent(tx.id, supplierComponent({ unit: 'kilos' as 'KGM' })), /unit/],
      [() => slow.api.updateComponent(tx.components![0]!.id, { hsn: 'abcd' }), /hsn/],
    ];
    for (const [call, field] of cases) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(error.message).toMatch(field);
    }
    expect(slow.api.stats.requests).toBe(before);
    expect(Object.keys(slow.sim.control.transactionCountsByCustomId()).filter((k) => /^v\d$/.test(k))).toEqual([]);
  });
});
