// The control API for tests and demos: read the dataset as a warehouse check needs it, and mutate it.
import { CALLER } from './connections.ts';
import { parseFaults, type FaultProfile } from './faults.ts';
import { notFound } from './http-errors.ts';
import { parseInterceptRule, type InterceptRule } from './intercepts.ts';
import type { Entitlements } from './options.ts';
import { ODD_KINDS, plotIdFor, type Analysis, type OddKind } from './plot-factory.ts';
import type { PlotPatch } from './plot-store.ts';
import { uuidFor } from './rng.ts';
import { businessIndexOf, plotForCaller, type PlotPageHook, type SimState } from './state.ts';
import type { Transaction } from './transactions.ts';
import { webhookToWire, type Attempt } from './webhooks.ts';

export interface SupplierInfo {
  id: string;
  name: string;
  connectionId: string;
  /** Distinct live plots reachable through this supplier (its own and its upstream businesses'). */
  plotsCount: number;
  /** Plots owned by the supplier itself. */
  ownPlotsCount: number;
}

export interface AnalysisInput {
  type?: 'EUFOROBS' | 'PRECISION' | string;
  status?: string;
  riskOfDeforestation?: number;
  deforestedArea?: number;
}

export interface SimulatorControl {
  callerBusinessId(): string;
  suppliers(): SupplierInfo[];
  /** Every distinct plot the caller can see (own + through connected suppliers), current state. */
  plots(opts?: { includeOwn?: boolean }): Generator<{ plot: Record<string, unknown>; supplierIds: string[] }>;
  countPlots(opts?: { includeOwn?: boolean }): number;
  getPlot(id: string): Record<string, unknown> | undefined;
  /** Ids of the deliberately odd records (undefined when the dataset is too small to hold one). */
  oddRecords(): Partial<Record<OddKind, string>>;
  editPlot(id: string, patch: PlotPatch): Record<string, unknown>;
  setRiskStatus(id: string, riskAssessmentStatus: string, riskLevel?: string | null): Record<string, unknown>;
  addAnalysis(id: string, input?: AnalysisInput): Record<string, unknown>;
  removePlot(id: string): void;
  /** Brings a removed plot back at its place in every list (an insertion in front of the plots after it). */
  restorePlot(id: string): void;
  /** Ids of a supplier's plot list in the order its pages serve them (its own and its upstream businesses'). */
  supplierPlotIds(businessId: string): string[];
  /**
   * Runs `hook` before each page of a supplier's plots is served (in-process only): a test changes the
   * data between chosen page reads. Returns the function that removes the hook.
   */
  onPlotPage(hook: PlotPageHook): () => void;
  disconnectSupplier(businessId: string): void;
  /**
   * Restores the seeded state: plots, connections, invitations, surveys, transactions, webhooks, settings;
   * removes interception rules and request counts, and cuts held requests unanswered (never applied).
   */
  reset(): void;
  transactions(): Transaction[];
  transactionCountsByCustomId(): Record<string, number>;
  setTransactionStatus(id: string, status: string): Transaction;
  webhooks(): Array<Record<string, unknown> & { secret: string }>;
  attempts(webhookId: string): Attempt[];
  rotateWebhookSecret(webhookId: string): { secret: string; previousSecret: string };
  surveyResponses(): Array<{ id: string; status: string }>;
  setSurveyResponseStatus(id: string, status: string): void;
  /** Serves these bytes as the response's PDF while it is COMPLETED (null: the rendered PDF again). */
  setSurveyResponsePdf(id: string, document: Buffer | null): void;
  /** The next `times` PDF requests of the response answer `status` (500 unless given). */
  failSurveyResponsePdf(id: string, times: number, status?: number): void;
  invitations(): Array<{
    id: string;
    status: string;
    senderBusinessId: string;
    email: string;
    customData: Record<string, unknown>;
  }>;
  setEntitlements(partial: Partial<Entitlements>): Entitlements;
  setInvitationsEnabled(enabled: boolean): void;
  setFaults(faults: Partial<FaultProfile> | string): FaultProfile;
  setTransactionErrorRatio(ratio: number): void;
  /** A valid token with any lifetime (negative = already expired). */
  mintToken(lifetimeSeconds: number): Promise<string>;
  /**
   * The next `times` requests matching the rule are answered as it says (a status, a cut connection,
   * held before or after they are handled, handled with the answer lost) instead of any drawn fault.
   * Rules apply in the order added; a bad rule throws, naming each field and its rule.
   */
  intercept(rule: InterceptRule): InterceptRule;
  /** Removes every rule not used up (held requests stay held). */
  clearIntercepts(): void;
  /** Requests held by holdRequest / holdResponse rules now. */
  heldRequests(): number;
  /** Resolves once at least `n` requests are held (an event, not a sleep). */
  whenHeld(n?: number): Promise<void>;
  /** Lets every held request go on; resolves with their number once each was handled (a held create applied). */
  releaseHeld(): Promise<number>;
  /** Requests that reached each service route since start or reset, keyed `METHOD /route/:pattern`. */
  requestCounts(): Record<string, number>;
}

export function createControl(state: SimState): SimulatorControl {
  const { layout, plots } = state;
  const visibleBusinesses = (includeOwn: boolean): Array<{ index: number; supplierIds: string[] }> => {
    const connected = state.connections.supplierIndices();
    const out: Array<{ index: number; supplierIds: string[] }> = [];
    for (const node of layout.businesses) {
      if (node.plotCount === 0) continue;
      if (node.index === CALLER) {
        if (includeOwn) out.push({ index: CALLER, supplierIds: [] });
        continue;
      }
      const via = (layout.reachedBy[node.index] ?? []).filter((s) => connected.has(s));
      if (via.length > 0) out.push({ index: node.index, supplierIds: via.map((s) => layout.businesses[s]?.id ?? '') });
    }
    return out;
  };
  const plotWire = (id: string): Record<string, unknown> => {
    const g = plots.indexOf(id);
    const plot = g === undefined ? undefined : plots.get(g);
    if (!plot) throw notFound(`Plot ${id}`);
    return plotForCaller(state, plot);
  };
  const initialSettings = { ...state.settings, entitlements: { ...state.settings.entitlements } };

  return {
    callerBusinessId: () => layout.businesses[CALLER]?.id ?? '',
    suppliers: () =>
      state.connections.suppliers().map((c) => {
        const node = layout.businesses[c.sourceIndex];
        const reach = layout.reach.get(c.sourceIndex);
        return {
          id: node?.id ?? '',
          name: node?.name ?? '',
          connectionId: c.id,
          plotsCount: reach ? plots.liveCount(reach) : 0,
          ownPlotsCount: node?.plotCount ?? 0,
        };
      }),
    *plots(opts = {}) {
      for (const { index, supplierIds } of visibleBusinesses(opts.includeOwn ?? true)) {
        for (const plot of plots.ofBusiness(index)) yield { plot: plotForCaller(state, plot), supplierIds };
      }
    },
    countPlots(opts = {}) {
      let n = 0;
      for (const { index } of visibleBusinesses(opts.includeOwn ?? true)) {
        const node = layout.businesses[index];
        if (!node) continue;
        n += node.plotCount - plots.removedIn(node.plotStart, node.plotCount);
      }
      return n;
    },
    getPlot: (id) => {
      const g = plots.indexOf(id);
      const plot = g === undefined ? undefined : plots.get(g);
      return plot ? plotForCaller(state, plot) : undefined;
    },
    oddRecords: () => {
      const own = layout.businesses[CALLER]?.plotCount ?? 0;
      const out: Partial<Record<OddKind, string>> = {};
      ODD_KINDS.forEach((kind, k) => {
        if (own + k < layout.totalPlots) out[kind] = plotIdFor(state.seed, own + k);
      });
      return out;
    },
    editPlot: (id, patch) => {
      if (!plots.edit(id, patch)) throw notFound(`Plot ${id}`);
      return plotWire(id);
    },
    setRiskStatus: (id, riskAssessmentStatus, riskLevel) => {
      const patch: PlotPatch = { riskAssessmentStatus };
      if (riskLevel !== undefined) patch.riskLevel = riskLevel;
      if (!plots.edit(id, patch)) throw notFound(`Plot ${id}`);
      return plotWire(id);
    },
    addAnalysis: (id, input = {}) => {
      const now = new Date().toISOString();
      const analysis: Analysis = {
        id: uuidFor(state.seed, 'analysis-added', id, now),
        createdAt: now,
        updatedAt: now,
        status: input.status ?? 'succeeded',
        plotId: id,
        analysedAt: now,
        version: input.type === 'PRECISION' ? '3.1.0' : '2.4.2',
        deforestedArea: input.deforestedArea ?? 0,
        deforestedGeometry: {},
        riskOfDeforestation: input.riskOfDeforestation ?? 0,
        type: input.type ?? 'EUFOROBS',
        customData: {},
        name: 'Analysis added by control',
      };
      if (!plots.addAnalysis(id, analysis)) throw notFound(`Plot ${id}`);
      return plotWire(id);
    },
    removePlot: (id) => {
      if (!plots.remove(id)) throw notFound(`Plot ${id}`);
    },
    restorePlot: (id) => {
      if (!plots.restore(id)) throw notFound(`Removed plot ${id}`);
    },
    supplierPlotIds: (businessId) => {
      const index = businessIndexOf(state, businessId);
      const reach = index === undefined ? undefined : layout.reach.get(index);
      if (!reach) throw notFound(`Supplier ${businessId}`);
      return [...plots.scan(reach)].map((p) => p.id);
    },
    onPlotPage: (hook) => {
      state.plotPageHooks.add(hook);
      return () => void state.plotPageHooks.delete(hook);
    },
    disconnectSupplier: (businessId) => {
      const index = businessIndexOf(state, businessId);
      if (index === undefined || !state.connections.disconnectSupplier(index)) throw notFound(`Supplier ${businessId}`);
    },
    reset: () => {
      plots.reset();
      state.plotPageHooks.clear();
      state.connections.reset();
      state.invitations.reset();
      state.surveys.reset();
      state.transactions.reset();
      state.webhooks.reset();
      state.intercepts.reset();
      Object.assign(state.settings, { ...initialSettings, entitlements: { ...initialSettings.entitlements } });
    },
    transactions: () => state.transactions.list(),
    transactionCountsByCustomId: () => Object.fromEntries(state.transactions.countByCustomId()),
    setTransactionStatus: (id, status) => state.transactions.setStatus(id, status),
    webhooks: () => state.webhooks.list().map((h) => ({ ...webhookToWire(h), secret: h.secret })),
    attempts: (webhookId) => (state.webhooks.get(webhookId), state.webhooks.attemptsOf(webhookId)),
    rotateWebhookSecret: (webhookId) => {
      const hook = state.webhooks.rotateSecret(webhookId, state.opts.rotationGraceMs);
      return { secret: hook.secret, previousSecret: hook.previousSecret ?? '' };
    },
    surveyResponses: () => state.surveys.list().map((r) => ({ id: r.id, status: r.status })),
    setSurveyResponseStatus: (id, status) => state.surveys.setStatus(id, status),
    setSurveyResponsePdf: (id, document) => state.surveys.setDocument(id, document),
    failSurveyResponsePdf: (id, times, status = 500) => state.surveys.failPdf(id, times, status),
    invitations: () =>
      state.invitations.all().map((i) => ({
        id: i.id,
        status: i.status,
        senderBusinessId: layout.businesses[i.senderIndex]?.id ?? '',
        email: i.email,
        customData: { ...i.customData },
      })),
    setEntitlements: (partial) => Object.assign(state.settings.entitlements, partial),
    setInvitationsEnabled: (enabled) => {
      state.settings.invitationsEnabled = enabled;
    },
    setFaults: (faults) => (state.settings.faults = parseFaults(faults)),
    setTransactionErrorRatio: (ratio) => {
      state.settings.errorRatio = ratio;
    },
    mintToken: (lifetimeSeconds) => state.auth.mint(lifetimeSeconds),
    intercept: (rule) => state.intercepts.add(parseInterceptRule(rule)),
    clearIntercepts: () => state.intercepts.clear(),
    heldRequests: () => state.intercepts.heldCount(),
    whenHeld: (n = 1) => state.intercepts.whenHeld(n),
    releaseHeld: () => state.intercepts.release(),
    requestCounts: () => state.intercepts.requestCounts(),
  };
}
