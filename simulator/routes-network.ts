// Business connections and business invitations.
import { validateCustomData } from './custom-data.ts';
import { badRequest, notFound } from './http-errors.ts';
import { INVITATION_STATUSES, type Invitation } from './invitations.ts';
import { json, type Route } from './router.ts';
import { connectionToWire, plotForCaller, type SimState } from './state.ts';
import { userWire } from './businesses.ts';

/** Plots embedded in an invitation's business are capped to keep the response bounded. */
const EMBEDDED_PLOTS = 20;

function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest(['body must be a JSON object']);
  return body as Record<string, unknown>;
}

function invitationToWire(state: SimState, inv: Invitation): Record<string, unknown> {
  const sender = state.layout.businesses[inv.senderIndex];
  if (!sender) throw notFound(`Business ${inv.senderIndex}`);
  const connections = [...state.connections.suppliers(), ...state.connections.buyers()]
    .filter((c) => c.sourceIndex === inv.senderIndex || c.targetIndex === inv.senderIndex)
    .map((c) => connectionToWire(state, c));
  const plots = [];
  for (const plot of state.plots.ofBusiness(inv.senderIndex)) {
    if (plots.push(plotForCaller(state, plot)) >= EMBEDDED_PLOTS) break;
  }
  const user = userWire(state.seed, sender, state.settings.entitlements);
  return {
    id: inv.id,
    sentByUser: { ...user, business: state.businessWire(inv.senderIndex) },
    business: {
      ...state.businessWire(inv.senderIndex),
      plots,
      members: [user],
      connectionsAsSource: connections.filter((c) => (c['sourceBusiness'] as { id: string }).id === sender.id),
      connectionsAsTarget: connections.filter((c) => (c['targetBusiness'] as { id: string }).id === sender.id),
      businessInvitations: [],
    },
    email: inv.email,
    status: inv.status,
    createdAt: inv.createdAt,
    updatedAt: inv.updatedAt,
    sourceIsInvitee: inv.sourceIsInvitee,
    // Rule 8: visible only to owners; the caller owns invitations it sent or received.
    customData: inv.customData,
  };
}

export function networkRoutes(state: SimState): Route[] {
  return [
    {
      method: 'GET',
      path: '/business-connections/suppliers',
      handler: () =>
        json(
          200,
          state.connections.suppliers().map((c) => connectionToWire(state, c)),
        ),
    },
    {
      method: 'GET',
      path: '/business-connections/buyers',
      handler: () =>
        json(
          200,
          state.connections.buyers().map((c) => connectionToWire(state, c)),
        ),
    },
    {
      method: 'PATCH',
      path: '/business-connections/:id',
      handler: ({ params, body }) => {
        const b = bodyObject(body);
        const cd = validateCustomData(b['customData']);
        if (!cd.ok) throw badRequest(cd.messages);
        return json(200, connectionToWire(state, state.connections.setCustomData(params[0] ?? '', cd.value)));
      },
    },
    {
      method: 'GET',
      path: '/business-invitations',
      handler: () =>
        json(
          200,
          state.invitations.received().map((i) => invitationToWire(state, i)),
        ),
    },
    {
      method: 'POST',
      path: '/business-invitations',
      handler: ({ body }) => {
        const b = bodyObject(body);
        const messages: string[] = [];
        if (typeof b['email'] !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(b['email']))
          messages.push('email must be an email');
        let customData: Record<string, unknown> = {};
        if (b['customData'] !== undefined) {
          const cd = validateCustomData(b['customData']);
          if (cd.ok) customData = cd.value;
          else messages.push(...cd.messages);
        }
        if (messages.length > 0) throw badRequest(messages);
        return json(201, invitationToWire(state, state.invitations.create(b['email'] as string, customData)));
      },
    },
    {
      method: 'PATCH',
      path: '/business-invitations/:id',
      handler: ({ params, body }) => {
        if (!state.settings.invitationsEnabled)
          return json(501, {
            statusCode: 501,
            message: 'Business invitations are not enabled on this environment',
            error: 'Not Implemented',
          });
        const b = bodyObject(body);
        const messages: string[] = [];
        const patch: { status?: string; customData?: Record<string, unknown> } = {};
        if (b['status'] !== undefined) {
          if (typeof b['status'] !== 'string' || !(INVITATION_STATUSES as readonly string[]).includes(b['status']))
            messages.push(`status must be one of the following values: ${INVITATION_STATUSES.join(', ')}`);
          else patch.status = b['status'];
        }
        if (b['customData'] !== undefined) {
          const cd = validateCustomData(b['customData']);
          if (cd.ok) patch.customData = cd.value;
          else messages.push(...cd.messages);
        }
        if (messages.length > 0) throw badRequest(messages);
        return json(200, invitationToWire(state, state.invitations.update(params[0] ?? '', patch, true)));
      },
    },
  ];
}
