import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfStructureProblems, readPdf } from '../support/pdf-reader.ts';
import { startClient, type Client } from './helpers.ts';

describe('survey response PDFs, connections and invitations', () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.sim.close());

  it('renders a real PDF when COMPLETED, 422 otherwise, 404 when unknown', async () => {
    const responses = c.sim.control.surveyResponses();
    const completed = responses.find((r) => r.status === 'COMPLETED')!;
    const pending = responses.find((r) => r.status !== 'COMPLETED')!;
    const res = await c.get(`/survey-responses/${completed.id}/pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await res.arrayBuffer());
    // A real reader opens it without repairing anything and finds the response's id on its page.
    expect(pdfStructureProblems(pdf)).toEqual([]);
    const read = await readPdf(pdf);
    expect(read.complaints).toEqual([]);
    expect(read.pages).toBe(1);
    expect(read.firstPageText).toContain(completed.id);
    const notYet = await c.get(`/survey-responses/${pending.id}/pdf`);
    expect(notYet.status).toBe(422);
    expect(await notYet.json()).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity' });
    expect((await c.get('/survey-responses/00000000-0000-4000-8000-000000000000/pdf')).status).toBe(404);
    c.sim.control.setSurveyResponseStatus(pending.id, 'COMPLETED');
    expect((await c.get(`/survey-responses/${pending.id}/pdf`)).status).toBe(200);
  });

  it('lists suppliers and buyers; only the buyer side may set customData, validated by rule', async () => {
    const suppliers = await c.json<
      Array<{
        id: string;
        sourceBusiness: { id: string };
        targetBusiness: { id: string };
        plotsCount: number;
        plotsCommodities: string[];
      }>
    >('/business-connections/suppliers');
    expect(suppliers).toHaveLength(5);
    expect(suppliers.every((s) => s.targetBusiness.id === c.sim.control.callerBusinessId())).toBe(true);
    expect(suppliers.map((s) => s.plotsCount)).toEqual(c.sim.control.suppliers().map((s) => s.plotsCount));
    expect(suppliers[0]?.plotsCommodities.length).toBeGreaterThan(0);
    const buyers = await c.json<Array<{ id: string }>>('/business-connections/buyers');
    expect(buyers.length).toBeGreaterThan(0);
    const id = suppliers[0]!.id;
    const ok = await c.send('PATCH', `/business-connections/${id}`, {
      customData: { erpId: 'V-17', active: true, rank: 3, _internal: 'x', $internal: 'y' },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { customData: unknown }).customData).toEqual({ erpId: 'V-17', active: true, rank: 3 });
    expect((await c.send('PATCH', `/business-connections/${buyers[0]!.id}`, { customData: {} })).status).toBe(403);
    const rules: Array<[unknown, string]> = [
      [Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i])), 'rule 1'],
      [{ ['k'.repeat(256)]: 1 }, 'rule 2'],
      [{ a: 'v'.repeat(256) }, 'rule 3'],
      [{ a: { nested: true } }, 'rule 4'],
      [JSON.parse('{"__proto__": "x"}'), 'rule 5'],
    ];
    for (const [customData, rule] of rules) {
      const res = await c.send('PATCH', `/business-connections/${id}`, { customData });
      expect(res.status, rule).toBe(400);
      expect(((await res.json()) as { message: string[] }).message.join(' ')).toContain(rule);
    }
  });

  it('handles invitations: 409 when already connected, accept creates a connection, cancel only by sender, 501 when off', async () => {
    const received =
      await c.json<
        Array<{ id: string; status: string; sentByUser: object; business: { id: string; plots: unknown[] } }>
      >('/business-invitations');
    const supplierIds = new Set(c.sim.control.suppliers().map((s) => s.id));
    const fromSupplier = received.find((i) => supplierIds.has(i.business.id) && i.status === 'PENDING')!;
    const fromProspect = received.find((i) => !supplierIds.has(i.business.id) && i.status === 'PENDING')!;
    expect(fromSupplier.sentByUser).toBeTruthy();
    expect((await c.send('PATCH', `/business-invitations/${fromSupplier.id}`, { status: 'ACCEPTED' })).status).toBe(
      409,
    );
    expect((await c.send('PATCH', `/business-invitations/${fromSupplier.id}`, { status: 'CANCELLED' })).status).toBe(
      403,
    );
    const buyersBefore = (await c.json<unknown[]>('/business-connections/buyers')).length;
    const accepted = await c.send('PATCH', `/business-invitations/${fromProspect.id}`, { status: 'ACCEPTED' });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ status: 'ACCEPTED', sourceIsInvitee: 'true' });
    expect(await c.json<unknown[]>('/business-connections/buyers')).toHaveLength(buyersBefore + 1);
    const sent = await c.send('POST', '/business-invitations', {
      email: 'new.supplier@example.com',
      customData: { ref: 'x' },
    });
    expect(sent.status).toBe(201);
    const inv = (await sent.json()) as { id: string };
    expect((await c.send('PATCH', `/business-invitations/${inv.id}`, { status: 'CANCELLED' })).status).toBe(200);
    expect((await c.send('POST', '/business-invitations', { email: 'not-an-email' })).status).toBe(400);
    c.sim.control.setInvitationsEnabled(false);
    const off = await c.send('PATCH', `/business-invitations/${inv.id}`, { status: 'PENDING' });
    expect(off.status).toBe(501);
    expect(await off.json()).toMatchObject({ statusCode: 501 });
  });
});
