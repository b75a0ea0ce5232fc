import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamClient } from '../../../upstream/client.ts';
import { RequestValidationError, UnprocessableError, NetworkError } from '../../../upstream/errors.ts';
import {
  fakeJwt,
  json,
  startServer,
  tokenRoute,
  type Handler,
  type LocalServer,
  type RecordedRequest,
} from './local-server.ts';

let server: LocalServer | undefined;
afterEach(async () => server?.close());

async function setup(route: Handler): Promise<{ client: UpstreamClient; calls: () => RecordedRequest[] }> {
  server = await startServer((req, res) => {
    if (tokenRoute(req, res, () => fakeJwt(1))) return;
    return route(req, res);
  });
  const client = createUpstreamClient({
    baseUrl: `${server.url}/`,
    clientId: 'c',
    clientSecret: 'secret-xyz',
    maxAttempts: 1,
  });
  return { client, calls: () => server!.requests.filter((r) => !r.path.endsWith('/token')) };
}

const component = { hsn: '1801', quantity: 1000, unit: 'KGM', supplierBusinessId: 'sup-1' } as const;

describe('endpoint requests and responses', () => {
  it('transactions: create, list with includes, get, patch, submit, delete, components', async () => {
    const { client, calls } = await setup((req, res) => {
      if (req.method === 'PUT') {
        res.writeHead(202);
        return res.end();
      }
      if (req.method === 'DELETE') {
        res.writeHead(204);
        return res.end();
      }
      if (req.path.startsWith('/components') || req.path.endsWith('/components'))
        return json(res, 200, { id: 'k1', hsn: 1801, unit: 'KGM' });
      if (req.method === 'GET' && req.path === '/transactions')
        return json(res, 200, [
          {
            id: 't1',
            status: 'AVAILABLE',
            customId: 'req-1',
            referenceNumber: '24DKYIGLPU3439',
            verificationNumber: '4NAB3QYM',
          },
        ]);
      json(res, 200, { id: 't1', status: 'DRAFT', referenceNumber: {}, verificationNumber: {} });
    });
    const created = await client.createTransaction({
      customId: 'req-1',
      activityType: 'IMPORT',
      countryOfActivity: 'DE',
      components: [component],
      customData: { batch: 'b1', _server: 'dropped' },
    });
    expect(created).toMatchObject({ id: 't1', status: 'DRAFT', referenceNumber: null });
    expect(JSON.parse(calls()[0]!.body)).toEqual({
      customId: 'req-1',
      activityType: 'IMPORT',
      countryOfActivity: 'DE',
      components: [component],
      customData: { batch: 'b1' },
    });
    const list = await client.listTransactions({ includes: ['components', 'components.ddsReferences'] });
    expect(calls()[1]!.query.get('includes')).toBe('components,components.ddsReferences');
    expect(list[0]).toMatchObject({ referenceNumber: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM' });
    expect((await client.findTransactionByCustomId('req-1'))?.id).toBe('t1');
    await client.getTransaction('t1');
    await client.updateTransaction('t1', { legalEntityId: 'le-1' });
    await client.submitTransaction('t1');
    expect((await client.addComponent('t1', component)).hsn).toBe('1801');
    await client.updateComponent('k1', { quantity: 5 });
    await client.deleteComponent('k1');
    await client.deleteTransaction('t1');
    expect(calls().map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /transactions',
      'GET /transactions',
      'GET /transactions',
      'GET /transactions/t1',
      'PATCH /transactions/t1',
      'PUT /transactions/t1/submit',
      'POST /transactions/t1/components',
      'PATCH /components/k1',
      'DELETE /components/k1',
      'DELETE /transactions/t1',
    ]);
  });

  it('refuses bad transaction input before sending, naming the field and the rule', async () => {
    const { client, calls } = await setup((_q, res) => json(res, 200, {}));
    const bad = async (input: unknown) =>
      (await client.createTransaction(input as never).catch((e: unknown) => e)) as RequestValidationError;
    expect((await bad({ activityType: 'SMUGGLE', countryOfActivity: 'DE' })).message).toMatch(
      /^POST \/transactions: invalid request: activityType: /,
    );
    expect((await bad({ activityType: 'IMPORT', countryOfActivity: 'de' })).message).toMatch(
      /countryOfActivity: an EU country as an ISO 3166-1 alpha-2 code/,
    );
    // The rules of schema/upstream/transaction-rules.ts, as the file intake and the simulator apply them.
    expect((await bad({ activityType: 'IMPORT', countryOfActivity: 'US' })).message).toMatch(
      /countryOfActivity: an EU country .*, got "US"/,
    );
    expect(
      (await bad({ activityType: 'IMPORT', countryOfActivity: 'DE', components: [{ ...component, hsn: '18a' }] }))
        .message,
    ).toMatch(/components\[0\]\.hsn: an HS code of 4, 6, 8 or 10 digits/);
    expect(
      (await bad({ activityType: 'IMPORT', countryOfActivity: 'DE', components: [{ ...component, hsn: '18010' }] }))
        .message,
    ).toMatch(/components\[0\]\.hsn: an HS code of 4, 6, 8 or 10 digits, got "18010"/);
    expect(
      (await bad({ activityType: 'IMPORT', countryOfActivity: 'DE', components: [{ ...component, hsn: '8471' }] }))
        .message,
    ).toMatch(/components\[0\]\.hsn: HS chapter 84 is not a chapter of the regulated commodities/);
    expect(
      (await bad({ activityType: 'IMPORT', countryOfActivity: 'DE', components: [{ ...component, quantity: 0 }] }))
        .message,
    ).toMatch(/components\[0\]\.quantity: a number greater than 0, got 0/);
    expect(
      (
        await bad({
          activityType: 'IMPORT',
          countryOfActivity: 'DE',
          components: [{ hsn: '1801', quantity: 1, unit: 'KGM' }],
        })
      ).message,
    ).toMatch(/components\[0\]: give either ddsReferences/);
    expect(
      (
        await bad({
          activityType: 'IMPORT',
          countryOfActivity: 'DE',
          components: [
            {
              ...component,
              supplierBusinessId: undefined,
              ddsReferences: [{ id: 'r', verificationNumber: 'v' }],
              plotIds: ['p'],
            },
          ],
        })
      ).message,
    ).toMatch(/components\[0\]\.plotIds: only for internal-supplier components/);
    expect(
      (await bad({ activityType: 'IMPORT', countryOfActivity: 'DE', customData: { nested: { a: 1 } } })).message,
    ).toMatch(/customData\.nested: rule 4/);
    expect(
      await client
        .updateComponent('k1', { ...component, ddsReferences: [{ id: 'r', verificationNumber: 'v' }] })
        .catch((e: unknown) => (e as Error).message),
    ).toMatch(/^PATCH \/components\/\{id\}: invalid request: give either ddsReferences/);
    expect(calls()).toHaveLength(0);
  });

  it('connections and invitations', async () => {
    const { client, calls } = await setup((req, res) => {
      if (req.path.startsWith('/business-connections/') && req.method === 'GET')
        return json(res, 200, [{ id: 'c1', plotsCount: 3, sourceBusiness: { id: 'b1', newlyCreated: 'true' } }]);
      if (req.path.startsWith('/business-connections/'))
        return json(res, 200, { id: 'c1', customData: JSON.parse(req.body).customData });
      if (req.method === 'GET') return json(res, 200, [{ id: 'i1', status: 'PENDING', sourceIsInvitee: 'false' }]);
      json(res, req.method === 'POST' ? 201 : 200, {
        id: 'i1',
        status: 'ACCEPTED',
        sourceIsInvitee: 'true',
        customData: { k: 'v' },
      });
    });
    expect((await client.listSuppliers())[0]?.sourceBusiness?.newlyCreated).toBe(true);
    await client.listBuyers();
    expect((await client.updateConnectionCustomData('c1', { tier: 1 })).customData).toEqual({ tier: 1 });
    expect((await client.listBusinessInvitations())[0]?.sourceIsInvitee).toBe(false);
    await client.createBusinessInvitation({ email: 'buyer@example.com', customData: { k: 'v' } });
    expect((await client.updateBusinessInvitation('i1', { status: 'ACCEPTED' })).sourceIsInvitee).toBe(true);
    expect(calls().map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /business-connections/suppliers',
      'GET /business-connections/buyers',
      'PATCH /business-connections/c1',
      'GET /business-invitations',
      'POST /business-invitations',
      'PATCH /business-invitations/i1',
    ]);
    await expect(client.createBusinessInvitation({ email: 'not-an-email' })).rejects.toThrow(/email/);
    await expect(client.updateBusinessInvitation('i1', { status: 'MAYBE' as never })).rejects.toBeInstanceOf(
      RequestValidationError,
    );
    await expect(client.updateBusinessInvitation('i1', {})).rejects.toThrow(/nothing to update/);
  });

  it('webhooks: CRUD, events, stats, attempts in any shape, example, and a secret that is then redacted', async () => {
    const attempt = {
      id: 'a1',
      msgId: 'm1',
      url: 'https://hooks.example.com/x',
      response: 'ok',
      responseStatusCode: 200,
      status: 'SUCCESS',
      timestamp: '2026-01-01T00:00:00Z',
      msg: { eventType: 'transaction.updated', payload: {}, id: 'm1', timestamp: '2026-01-01T00:00:00Z' },
    };
    const hook = {
      id: 'w1',
      url: 'https://hooks.example.com/x',
      description: {},
      events: ['transaction.updated'],
      isActive: true,
    };
    let attemptsShape = 0;
    const { client, calls } = await setup((req, res) => {
      if (req.path === '/webhooks/events') return json(res, 200, { events: ['transaction.updated'] });
      if (req.path.endsWith('/stats')) return json(res, 200, { successfulMessages: 3, failedMessages: 1 });
      if (req.path.endsWith('/attempts'))
        return json(res, 200, [attempt, { data: [attempt, attempt] }, [attempt]][attemptsShape++ % 3]);
      if (req.path.endsWith('/send-example')) return json(res, 201, { messageId: 'm9' });
      if (req.path.endsWith('/secret')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('whsec_c2VjcmV0LXNpZ25pbmcta2V5');
      }
      if (req.method === 'DELETE') {
        res.writeHead(204);
        return res.end();
      }
      if (req.method === 'GET' && req.path === '/webhooks') return json(res, 200, [hook]);
      json(res, req.method === 'POST' ? 201 : 200, hook);
    });
    expect(
      await client.createWebhook({ url: 'https://hooks.example.com/x', events: ['transaction.updated'] }),
    ).toMatchObject({ id: 'w1', description: null });
    expect(await client.listWebhooks()).toHaveLength(1);
    await client.getWebhook('w1');
    await client.updateWebhook('w1', { url: 'https://hooks.example.com/y', isActive: false });
    await client.deleteWebhook('w1');
    expect(await client.listWebhookEventTypes()).toEqual(['transaction.updated']);
    expect(await client.getWebhookStats('w1')).toEqual({ successfulMessages: 3, failedMessages: 1 });
    expect((await client.listWebhookAttempts('w1')).length).toBe(1);
    expect((await client.listWebhookAttempts('w1')).length).toBe(2);
    expect((await client.listWebhookAttempts('w1')).length).toBe(1);
    expect(await client.sendExampleWebhookEvent('w1', 'transaction.updated')).toEqual({ messageId: 'm9' });
    expect(await client.getWebhookSecret('w1')).toBe('whsec_c2VjcmV0LXNpZ25pbmcta2V5');
    expect(calls().some((c) => c.method === 'PATCH' && JSON.parse(c.body).url === 'https://hooks.example.com/y')).toBe(
      true,
    );
    await expect(client.createWebhook({ url: 'http://127.0.0.1:8080/hook' })).rejects.toThrow(
      /url: expected a valid http\(s\) URL whose host has a TLD/,
    );
    await expect(client.createWebhook({ url: 'https://a.example.com', description: 'd'.repeat(1001) })).rejects.toThrow(
      /description/,
    );
  });

  it('survey-response PDF: streamed bytes; 422 while not COMPLETED', async () => {
    const pdf = Buffer.from(`%PDF-1.7\n${'x'.repeat(100_000)}`);
    const { client, calls } = await setup((req, res) => {
      if (req.path.includes('/not-done/'))
        return json(res, 422, { statusCode: 422, message: 'Survey response is not completed' });
      if (req.path.includes('/gzipped/')) {
        // A proxy compressing PDFs: fetch decodes the body, Content-Length counts compressed bytes.
        const packed = gzipSync(pdf);
        res.writeHead(200, {
          'content-type': 'application/pdf',
          'content-encoding': 'gzip',
          'content-length': String(packed.length),
        });
        return void res.end(packed);
      }
      if (req.path.includes('/cut/')) {
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.length) });
        res.write(pdf.subarray(0, 1000));
        return void setImmediate(() => res.socket?.destroy());
      }
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.length) });
      res.end(pdf);
    });
    const dl = await client.getSurveyResponsePdf('sr-1');
    expect(dl.contentType).toBe('application/pdf');
    expect(dl.contentLength).toBe(pdf.length);
    const chunks: Buffer[] = [];
    for await (const c of dl.body) chunks.push(Buffer.from(c as Uint8Array));
    expect(Buffer.concat(chunks).equals(pdf)).toBe(true);
    expect(calls()[0]!.headers.accept).toBe('application/pdf');
    const err = await client.getSurveyResponsePdf('not-done').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnprocessableError);
    expect((err as Error).message).toBe(
      'GET /survey-responses/{id}/pdf: 422 unprocessable: Survey response is not completed',
    );
    const gzipped = await client.getSurveyResponsePdf('gzipped');
    expect(gzipped.contentLength).toBeUndefined();
    const unpacked: Buffer[] = [];
    for await (const c of gzipped.body) unpacked.push(Buffer.from(c as Uint8Array));
    expect(Buffer.concat(unpacked).equals(pdf)).toBe(true);
    const cut = await client.getSurveyResponsePdf('cut');
    const failure = await (async () => {
      for await (const _ of cut.body) {
        /* drain */
      }
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
  });

  it('refuses an empty path parameter before sending', async () => {
    const { client, calls } = await setup((_q, res) => json(res, 200, {}));
    await expect(client.getTransaction('')).rejects.toThrow(
      /GET \/transactions\/\{id\}: invalid request: id: required/,
    );
    expect(calls()).toHaveLength(0);
  });
});
