// Assembles the simulator's state (stores, clock, delivery) from resolved options, and the
// wire helpers that need several stores at once.
import { Auth } from './auth.ts';
import { businessWire } from './businesses.ts';
import { CALLER, ConnectionStore, type Connection } from './connections.ts';
import { DeliveryService } from './delivery.ts';
import type { FaultProfile } from './faults.ts';
import { Intercepts } from './intercepts.ts';
import { InvitationStore } from './invitations.ts';
import { buildLayout, defaultLayoutSpec, type Layout } from './layout.ts';
import type { Entitlements, ResolvedOptions } from './options.ts';
import { PlotStore } from './plot-store.ts';
import type { PlotState } from './plot-factory.ts';
import { plotToWire } from './plot-wire.ts';
import { uuidFor } from './rng.ts';
import { SurveyStore } from './surveys.ts';
import { Timers } from './timers.ts';
import { TransactionStore } from './transactions.ts';
import { WebhookStore } from './webhooks.ts';

/** A request for page `page` of a supplier's plots, about to be served. */
export interface PlotPageRequest {
  supplierId: string;
  page: number;
  limit: number;
}

export type PlotPageHook = (request: PlotPageRequest) => void | Promise<void>;

export interface SimState {
  opts: ResolvedOptions;
  seed: number;
  layout: Layout;
  plots: PlotStore;
  connections: ConnectionStore;
  invitations: InvitationStore;
  surveys: SurveyStore;
  transactions: TransactionStore;
  webhooks: WebhookStore;
  delivery: DeliveryService;
  auth: Auth;
  timers: Timers;
  /** Mutable at run time through control. */
  settings: { faults: FaultProfile; entitlements: Entitlements; invitationsEnabled: boolean; errorRatio: number };
  requestCounter: number;
  /** Called before a supplier's plot page is served: tests change the data between page reads. */
  plotPageHooks: Set<PlotPageHook>;
  /** Requests counted by route, and the control's interception rules and held requests. */
  intercepts: Intercepts;
  businessWire(index: number): Record<string, unknown>;
}

export function createState(opts: ResolvedOptions): SimState {
  const seed = opts.seed;
  const layout = buildLayout(seed, opts.layout ?? defaultLayoutSpec(seed, opts.suppliers, opts.plots, opts.ownPlots));
  const timers = new Timers(opts.timeScale);
  const connections = new ConnectionStore(seed, layout);
  const webhooks = new WebhookStore(seed);
  const delivery = new DeliveryService({ store: webhooks, timers, resolve: opts.resolve, log: opts.log });
  const settings = {
    faults: opts.faults,
    entitlements: { ...opts.entitlements },
    invitationsEnabled: opts.invitationsEnabled,
    errorRatio: opts.transactionErrorRatio,
  };
  const wires = new Map<number, Record<string, unknown>>();
  const state: SimState = {
    opts,
    seed,
    layout,
    plots: new PlotStore(seed, layout, opts.vertices, opts.hugePlotVertices),
    connections,
    invitations: new InvitationStore(seed, layout, connections),
    surveys: new SurveyStore(seed, layout),
    transactions: new TransactionStore({
      seed,
      timers,
      defaultLegalEntityId: uuidFor(seed, 'legal-entity', 0),
      errorRatio: () => settings.errorRatio,
      delays: opts.transactionDelays,
      onStatusChange: (tx) =>
        delivery.broadcast('transaction.updated', {
          data: { id: tx.id, status: tx.status },
          event: 'transaction.updated',
          timestamp: tx.updatedAt,
        }),
    }),
    webhooks,
    delivery,
    auth: new Auth({
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
      lifetimeSeconds: opts.tokenLifetimeSeconds,
      businessId: layout.businesses[CALLER]?.id ?? '',
    }),
    timers,
    settings,
    requestCounter: 0,
    plotPageHooks: new Set(),
    intercepts: new Intercepts(),
    businessWire(index) {
      let wire = wires.get(index);
      if (!wire) {
        const node = layout.businesses[index];
        if (!node) throw new Error(`no business ${index}`);
        wire = businessWire(seed, node);
        wires.set(index, wire);
      }
      return wire;
    },
  };
  return state;
}

/** Business index of a business id, or undefined. */
export function businessIndexOf(state: SimState, id: string): number | undefined {
  return state.layout.businesses.find((b) => b.id === id)?.index;
}

/** A plot as the caller sees it; `suppliers` are the connected direct suppliers reaching it. */
export function plotForCaller(
  state: SimState,
  plot: PlotState,
  query: { includes?: Set<string>; select?: Set<string> } = {},
): Record<string, unknown> {
  const connected = state.connections.supplierIndices();
  const via = (state.layout.reachedBy[plot.ownerIndex] ?? []).filter((s) => connected.has(s));
  const owner = state.layout.businesses[plot.ownerIndex];
  const opts: Parameters<typeof plotToWire>[1] = {
    seed: state.seed,
    ownerId: owner?.id ?? '',
    suppliers: via.map((s) => state.businessWire(s)),
    ownerIsCaller: plot.ownerIndex === CALLER,
  };
  if (query.includes) opts.includes = query.includes;
  if (query.select) opts.select = query.select;
  return plotToWire(plot, opts);
}

export function connectionToWire(state: SimState, c: Connection): Record<string, unknown> {
  const supplier = c.targetIndex === CALLER ? c.sourceIndex : CALLER;
  const reach = state.layout.reach.get(supplier);
  const node = state.layout.businesses[supplier];
  let plotsCount = 0;
  const commodities = new Set<string>();
  for (const b of reach?.businesses ?? (node ? [node.index] : [])) {
    const business = state.layout.businesses[b];
    if (!business || business.plotCount === 0) continue;
    for (const commodity of business.commodities) commodities.add(commodity);
  }
  plotsCount = reach ? state.plots.liveCount(reach) : (node?.plotCount ?? 0);
  return {
    id: c.id,
    sourceBusiness: state.businessWire(c.sourceIndex),
    targetBusiness: state.businessWire(c.targetIndex),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    // Rule 8: customData is visible only to its owner, the buyer side.
    customData: c.targetIndex === CALLER ? c.customData : {},
    plotsCount,
    plotsCommodities: [...commodities].sort(),
  };
}
