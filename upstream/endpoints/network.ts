import { z } from 'zod';
import {
  BusinessConnectionSchema,
  BusinessInvitationSchema,
  type BusinessConnection,
  type BusinessInvitation,
} from '../../schema/upstream.ts';
import { type CallOptions, type UpstreamHttp, endpointName } from '../client-core.ts';
import { RequestValidationError } from '../errors.ts';
import { CreateInvitationSchema, UpdateInvitationSchema, checkRequest } from '../request-checks.ts';
import { prepareCustomData } from '../custom-data.ts';
import { type INVITATION_STATUSES, PATHS } from '../../schema/upstream/service-facts.ts';
import { jsonBody } from '../transport.ts';
import { parseResponse } from '../validate.ts';
import { jsonArrayItems, jsonValueLeavingOut } from '../json-array-stream.ts';

/** Business connections (suppliers, buyers) and business invitations. */

/** The plots of an invitation's business and of its sender's business, by their path in the listing. */
const EMBEDDED_PLOTS = /^\d+\.(?:sentByUser\.)?business\.plots(?:\.|$)/;
/** The same in one invitation (the answer to a create or an update). */
const ONE_INVITATION = jsonValueLeavingOut(/^(?:sentByUser\.)?business\.plots(?:\.|$)/);

export interface UpdateInvitationInput {
  status?: (typeof INVITATION_STATUSES)[number];
  customData?: Record<string, string | number | boolean>;
}

export function networkEndpoints(http: UpstreamHttp) {
  const E = {
    suppliers: endpointName('GET', PATHS.suppliers),
    buyers: endpointName('GET', PATHS.buyers),
    patchConnection: endpointName('PATCH', PATHS.connection),
    listInvitations: endpointName('GET', PATHS.invitations),
    createInvitation: endpointName('POST', PATHS.invitations),
    patchInvitation: endpointName('PATCH', PATHS.invitation),
  };
  const connections = z.array(BusinessConnectionSchema);

  return {
    /** The caller's direct suppliers; the supplier is the side of the connection that is not the caller. */
    async listSuppliers(opts: CallOptions = {}): Promise<BusinessConnection[]> {
      const res = await http.request({ method: 'GET', template: PATHS.suppliers }, jsonBody, opts);
      return parseResponse(connections, res, E.suppliers);
    },

    async listBuyers(opts: CallOptions = {}): Promise<BusinessConnection[]> {
      const res = await http.request({ method: 'GET', template: PATHS.buyers }, jsonBody, opts);
      return parseResponse(connections, res, E.buyers);
    },

    /** Sets customData on a connection (only the buyer side may). */
    async updateConnectionCustomData(
      id: string,
      customData: Record<string, string | number | boolean>,
      opts: CallOptions = {},
    ): Promise<BusinessConnection> {
      const body = { customData: prepareCustomData(customData, E.patchConnection) };
      const res = await http.request(
        { method: 'PATCH', template: PATHS.connection, params: { id }, body },
        jsonBody,
        opts,
      );
      return parseResponse(BusinessConnectionSchema, res, E.patchConnection);
    },

    /**
     * Invitations received by the business, without the plots embedded in their businesses (the
     * contract embeds the sender's plots; ddsync keeps none of them, and one drawn in detail weighs
     * tens of megabytes): the listing is parsed as a stream and those members are dropped unread.
     */
    async listBusinessInvitations(opts: CallOptions = {}): Promise<BusinessInvitation[]> {
      const request = { method: 'GET' as const, template: PATHS.invitations, endpoint: E.listInvitations };
      const items: unknown[] = [];
      // What is kept is bounded in the stream (json-array-stream.ts): an endless listing fails, never fills the heap.
      for await (const { value } of jsonArrayItems(http, request, { ...opts, leaveOut: EMBEDDED_PLOTS }))
        items.push(value);
      return parseResponse(z.array(BusinessInvitationSchema), items, E.listInvitations);
    },

    async createBusinessInvitation(
      input: { email: string; customData?: Record<string, string | number | boolean> },
      opts: CallOptions = {},
    ): Promise<BusinessInvitation> {
      const body = checkRequest(CreateInvitationSchema, input, E.createInvitation);
      const res = await http.request({ method: 'POST', template: PATHS.invitations, body }, ONE_INVITATION, opts);
      return parseResponse(BusinessInvitationSchema, res, E.createInvitation);
    },

    /** Accept, reject, cancel, or set customData. 409: the connection already exists; 501: not enabled. */
    async updateBusinessInvitation(
      id: string,
      patch: UpdateInvitationInput,
      opts: CallOptions = {},
    ): Promise<BusinessInvitation> {
      if (patch.status === undefined && patch.customData === undefined) {
        throw new RequestValidationError(E.patchInvitation, [
          { path: '', message: 'give status or customData (nothing to update)' },
        ]);
      }
      const body = checkRequest(UpdateInvitationSchema, patch, E.patchInvitation);
      const res = await http.request(
        { method: 'PATCH', template: PATHS.invitation, params: { id }, body },
        ONE_INVITATION,
        opts,
      );
      return parseResponse(BusinessInvitationSchema, res, E.patchInvitation);
    },
  };
}
