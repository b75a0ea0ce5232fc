import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startHarness, rejectionOf, type Harness } from './harness.ts';
import { recordingFetch } from './recording-fetch.ts';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  NotImplementedError,
  RequestValidationError,
  UnprocessableError,
} from '../../upstream/index.ts';

const UNKNOWN = '00000000-0000-4000-8000-00000000dead';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('contract: business connections, invitations and survey-response PDFs', () => {
  let h: Harness;
  let caller: string;

  beforeAll(async () => {
    h = await startHarness({ layout: { ownPlots: 2, suppliers: [{ plots: 4 }, { plots: 3 }, { plots: 0 }] } });
    caller = h.sim.control.callerBusinessId();
  });
  afterAll(() => h.close());

  describe('business connections', () => {
    it('lists suppliers (the caller is the target) and buyers (the caller is the source)', async () => {
      const suppliers = await h.api.listSuppliers();
      expect(suppliers.map((c) => c.sourceBusiness?.id).sort()).toEqual(
        h.sim.control
          .suppliers()
          .map((s) => s.id)
          .sort(),
      );
      expect(suppliers.every((c) => c.targetBusiness?.id === caller)).toBe(true);
      expect(suppliers.map((c) => c.plotsCount).sort()).toEqual([0, 3, 4]);
      const buyers = await h.api.listBuyers();
      expect(buyers.length).toBeGreaterThan(0);
      expect(buyers.every((c) => c.sourceBusiness?.id === caller && c.targetBusiness?.id !== caller)).toBe(true);
    });

    it("lets the buyer side set customData, and carries the service's refusal otherwise", async () => {
      const supplierConnection = h.sim.control.suppliers()[1]!.connectionId;
      const updated = await h.api.updateConnectionCustomData(supplierConnection, {
        erpId: 'V-17',
        active: true,
        rank: 3,
      });
      expect(updated.id).toBe(supplierConnection);
      expect(updated.customData).toEqual({ erpId: 'V-17', active: true, rank: 3 });
      expect((await h.api.listSuppliers()).find((c) => c.id === supplierConnection)?.customData).toEqual({
        erpId: 'V-17',
        active: true,
        rank: 3,
      });

      const buyerConnection = (await h.api.listBuyers())[0]!.id;
      const refused = await rejectionOf(h.api.updateConnectionCustomData(buyerConnection, { erpId: 'B-1' }));
      expect(refused).toBeInstanceOf(ForbiddenError);
      expect(refused.name).toBe('ForbiddenError'); // not a transaction endpoint: not NotEntitledError
      expect(refused.status).toBe(403);
      expect(refused.retryable).toBe(false);
      expect(refused.serviceMessage).toMatch(/Only the buyer side/);
      expect(await rejectionOf(h.api.updateConnectionCustomData(UNKNOWN, { a: 1 }))).toBeInstanceOf(NotFoundError);
    });
  });

  describe('business invitations', () => {
    it('lists the received invitations with their sender business', async () => {
      const received = await h.api.listBusinessInvitations();
      expect(received).toHaveLength(3);
      expect(received.map((i) => i.status).sort()).toEqual(['PENDING', 'PENDING', 'REJECTED']);
      for (const inv of received) {
        expect(inv.business?.id).toBeTruthy();
        expect(inv.business?.id).not.toBe(caller);
        expect(typeof inv.sourceIsInvitee).toBe('boolean'); // text flag normalised
      }
    });

    it('leaves out the plots the listing embeds in its businesses, unread, and keeps the rest', async () => {
      interface SentBusiness {
        id: string;
        plots: unknown[];
        members: Array<{ email: string }>;
        connectionsAsSource: unknown[];
      }
      let sent: Array<{ id: string; business: SentBusiness; sentByUser: { business: SentBusiness } }> = [];
      const capturing: typeof fetch = async (input, init) => {
        const res = await globalThis.fetch(input, init);
        if (String(input).endsWith('/business-invitations')) sent = JSON.parse(await res.clone().text());
        return res;
      };
      const received = await h.client({ fetch: capturing }).listBusinessInvitations();
      expect(sent.some((inv) => inv.business.plots.length > 0)).toBe(true);
      expect(received.map((inv) => inv.id)).toEqual(sent.map((inv) => inv.id));
      for (const [i, inv] of received.entries()) {
        expect(inv.business).not.toHaveProperty('plots');
        expect(inv.business?.members?.map((m) => m.email)).toEqual(sent[i]!.business.members.map((m) => m.email));
        expect(inv.business?.connectionsAsSource?.length).toBe(sent[i]!.business.connectionsAsSource.length);
        expect(inv.sentByUser?.business?.id).toBe(sent[i]!.sentByUser.business.id);
      }
    });

    it('creates an invitation (201, PENDING) carrying its customData', async () => {
      const before = h.sim.control.invitations().length;
      const rec = recordingFetch();
      const inv = await h
        .client({ fetch: rec.fetch })
        .createBusinessInvitation({ email: 'new.supplier@example.com', customData: { ref: 'INV-1' } });
      expect(rec.last('POST', /^\/business-invitations$/)?.status).toBe(201);
      expect(inv).toMatchObject({ email: 'new.supplier@example.com', status: 'PENDING' });
      expect(inv.customData).toMatchObject({ ref: 'INV-1' });
      expect(h.sim.control.invitations()).toHaveLength(before + 1);
      expect(inv.business?.id).toBe(caller);
      const requests = h.api.stats.requests;
      expect(await rejectionOf(h.api.createBusinessInvitation({ email: 'not-an-email' }))).toBeInstanceOf(
        RequestValidationError,
      );
      expect(h.api.stats.requests).toBe(requests);
    });

    it('refuses to accept with ConflictError when the connection already exists', async () => {
      const supplierIds = new Set(h.sim.control.suppliers().map((s) => s.id));
      const fromSupplier = (await h.api.listBusinessInvitations()).find(
        (i) => i.status === 'PENDING' && supplierIds.has(i.business!.id),
      )!;
      const error = await rejectionOf(h.api.updateBusinessInvitation(fromSupplier.id, { status: 'ACCEPTED' }));
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.status).toBe(409);
      expect(error.retryable).toBe(false);
      expect(error.serviceMessage).toMatch(/already exists/);
      expect(h.sim.control.invitations().find((i) => i.id === fromSupplier.id)?.status).toBe('PENDING');
    });

    it('accepts a new one, which creates the connection', async () => {
      const supplierIds = new Set(h.sim.control.suppliers().map((s) => s.id));
      const fromProspect = (await h.api.listBusinessInvitations()).find(
        (i) => i.status === 'PENDING' && !supplierIds.has(i.business!.id),
      )!;
      const prospect = fromProspect.business!.id;
      const buyersBefore = await h.api.listBuyers();
      expect(buyersBefore.some((c) => c.targetBusiness?.id === prospect)).toBe(false);
      const accepted = await h.api.updateBusinessInvitation(fromProspect.id, { status: 'ACCEPTED' });
      expect(accepted).toMatchObject({ id: fromProspect.id, status: 'ACCEPTED', sourceIsInvitee: true });
      // sourceIsInvitee: the invited business (the caller) shares data, so the prospect is now a buyer.
      const buyersAfter = await h.api.listBuyers();
      expect(buyersAfter).toHaveLength(buyersBefore.length + 1);
      expect(buyersAfter.some((c) => c.targetBusiness?.id === prospect && c.sourceBusiness?.id === caller)).toBe(true);
    });

    it('rejects a received invitation; only its sender may cancel one', async () => {
      const supplierIds = new Set(h.sim.control.suppliers().map((s) => s.id));
      const fromSupplier = (await h.api.listBusinessInvitations()).find((i) => supplierIds.has(i.business!.id))!;
      const cancel = await rejectionOf(h.api.updateBusinessInvitation(fromSupplier.id, { status: 'CANCELLED' }));
      expect(cancel).toBeInstanceOf(ForbiddenError);
      expect(cancel.serviceMessage).toMatch(/Only the business that sent/);
      const rejected = await h.api.updateBusinessInvitation(fromSupplier.id, { status: 'REJECTED' });
      expect(rejected.status).toBe('REJECTED');
      expect(h.sim.control.invitations().find((i) => i.id === fromSupplier.id)?.status).toBe('REJECTED');

      const sent = await h.api.createBusinessInvitation({ email: 'to.cancel@example.com' });
      const accept = await rejectionOf(h.api.updateBusinessInvitation(sent.id, { status: 'ACCEPTED' }));
      expect(accept).toBeInstanceOf(ForbiddenError);
      const cancelled = await h.api.updateBusinessInvitation(sent.id, { status: 'CANCELLED' });
      expect(cancelled.status).toBe('CANCELLED');
      expect(h.sim.control.invitations().find((i) => i.id === sent.id)?.status).toBe('CANCELLED');
      expect(await rejectionOf(h.api.updateBusinessInvitation(UNKNOWN, { status: 'REJECTED' }))).toBeInstanceOf(
        NotFoundError,
      );
    });

    it('answers NotImplementedError (501) when the feature is switched off', async () => {
      const sent = await h.api.createBusinessInvitation({ email: 'off@example.com' });
      h.sim.control.setInvitationsEnabled(false);
      try {
        const before = h.api.stats.requests;
        const error = await rejectionOf(h.api.updateBusinessInvitation(sent.id, { status: 'CANCELLED' }));
        expect(error).toBeInstanceOf(NotImplementedError);
        expect(error.status).toBe(501);
        expect(error.retryable).toBe(false);
        expect(error.serviceMessage).toMatch(/not enabled/);
        expect(h.api.stats.requests - before).toBe(1); // a 5xx, but not retried
      } finally {
        h.sim.control.setInvitationsEnabled(true);
      }
      expect(h.sim.control.invitations().find((i) => i.id === sent.id)?.status).toBe('PENDING');
    });
  });

  describe('survey-response PDF', () => {
    it('streams the PDF of a COMPLETED survey response', async () => {
      const completed = h.sim.control.surveyResponses().find((r) => r.status === 'COMPLETED')!;
      const pdf = await h.api.getSurveyResponsePdf(completed.id);
      expect(pdf.contentType).toMatch(/^application\/pdf/);
      const bytes = await readAll(pdf.body);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(bytes.subarray(-8).toString('latin1')).toContain('%%EOF');
      if (pdf.contentLength !== undefined) expect(bytes.length).toBe(pdf.contentLength);
    });

    it('answers UnprocessableError (422) before completion, then the PDF once completed', async () => {
      const pending = h.sim.control.surveyResponses().find((r) => r.status !== 'COMPLETED')!;
      const error = await rejectionOf(h.api.getSurveyResponsePdf(pending.id));
      expect(error).toBeInstanceOf(UnprocessableError);
      expect(error.status).toBe(422);
      expect(error.serviceMessage).toMatch(/COMPLETED/);
      h.sim.control.setSurveyResponseStatus(pending.id, 'COMPLETED');
      const bytes = await readAll((await h.api.getSurveyResponsePdf(pending.id)).body);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    });

    it('answers NotFoundError (404) for an unknown survey response', async () => {
      const error = await rejectionOf(h.api.getSurveyResponsePdf(UNKNOWN));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error.status).toBe(404);
      expect(error.retryable).toBe(false);
    });
  });
});
