// Business invitations: seeded received ones (one whose acceptance must 409), sent ones via POST.
import { INVITATION_STATUSES } from '../schema/upstream/service-facts.ts';
import { SERVER_SOURCE_KEY, withServerKeys } from './custom-data.ts';
import { HttpError, forbidden, notFound, conflict } from './http-errors.ts';
import { CALLER, type ConnectionStore } from './connections.ts';
import type { Layout } from './layout.ts';
import { uuidFor } from './rng.ts';

export { INVITATION_STATUSES };

export interface Invitation {
  id: string;
  senderIndex: number;
  /** Business index of the invitee; undefined when invited by e-mail only (sent by the caller). */
  recipientIndex?: number;
  email: string;
  status: string;
  sourceIsInvitee: 'true' | 'false';
  customData: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export class InvitationStore {
  private invitations = new Map<string, Invitation>();
  private counter = 0;

  constructor(
    private seed: number,
    private layout: Layout,
    private connections: ConnectionStore,
  ) {
    this.reset();
  }

  reset(): void {
    this.invitations.clear();
    const at = (d: number): string => new Date(Date.UTC(2024, 0, d)).toISOString();
    const seedOne = (n: number, senderIndex: number, status: string, sourceIsInvitee: 'true' | 'false'): void => {
      const id = uuidFor(this.seed, 'invitation', n);
      this.invitations.set(id, {
        id,
        senderIndex,
        recipientIndex: CALLER,
        email: 'compliance@demo-importer.example.com',
        status,
        sourceIsInvitee,
        customData: {},
        createdAt: at(n + 1),
        updatedAt: at(n + 1),
      });
    };
    // 0: from an already connected supplier, so accepting it answers 409.
    const firstSupplier = this.layout.supplierIndices[0];
    if (firstSupplier !== undefined) seedOne(0, firstSupplier, 'PENDING', 'false');
    // 1: from a prospect with no connection yet: accepting creates one (the caller becomes its supplier).
    seedOne(1, this.layout.prospectIndex, 'PENDING', 'true');
    // 2: an old, rejected one.
    const buyer = this.layout.buyerIndices[0];
    if (buyer !== undefined) seedOne(2, buyer, 'REJECTED', 'true');
  }

  received(): Invitation[] {
    return [...this.invitations.values()].filter((i) => i.recipientIndex === CALLER);
  }

  all(): Invitation[] {
    return [...this.invitations.values()];
  }

  create(email: string, customData: Record<string, unknown>): Invitation {
    const now = new Date().toISOString();
    const id = uuidFor(this.seed, 'invitation-new', this.counter++);
    // The service stamps its own key (server-owned namespace) next to the client's: rule 7.
    const inv: Invitation = {
      id,
      senderIndex: CALLER,
      email,
      status: 'PENDING',
      sourceIsInvitee: 'true',
      customData: withServerKeys({ [SERVER_SOURCE_KEY]: 'api' }, customData),
      createdAt: now,
      updatedAt: now,
    };
    this.invitations.set(id, inv);
    return inv;
  }

  /** PATCH semantics of the contract's table; `enabled` false answers 501. */
  update(id: string, patch: { status?: string; customData?: Record<string, unknown> }, enabled: boolean): Invitation {
    if (!enabled) throw new HttpError(501, 'Business invitations are not enabled on this environment');
    const inv = this.invitations.get(id);
    if (!inv) throw notFound(`Business invitation ${id}`);
    const callerSent = inv.senderIndex === CALLER;
    if (patch.status === 'CANCELLED' && !callerSent)
      throw forbidden('Only the business that sent an invitation may cancel it');
    if ((patch.status === 'ACCEPTED' || patch.status === 'REJECTED') && callerSent)
      throw forbidden('Only the invited business may accept or reject an invitation');
    if (patch.status === 'ACCEPTED' && inv.status !== 'ACCEPTED') {
      const other = callerSent ? inv.recipientIndex : inv.senderIndex;
      if (other !== undefined && this.connections.between(CALLER, other))
        throw conflict('A business connection between the two businesses already exists');
      if (other !== undefined) {
        // sourceIsInvitee "true": the invited business (the caller) shares data, i.e. is the source.
        if (inv.sourceIsInvitee === 'true') this.connections.add(CALLER, other);
        else this.connections.add(other, CALLER);
      }
    }
    if (patch.status !== undefined) inv.status = patch.status;
    if (patch.customData !== undefined) inv.customData = withServerKeys(inv.customData, patch.customData);
    inv.updatedAt = new Date().toISOString();
    return inv;
  }
}
