// Public options of the simulator, their defaults and validation.
import type { FaultProfile } from './faults.ts';
import { parseFaults } from './faults.ts';
import type { LayoutSpec } from './layout.ts';
import type { TransactionDelays } from './transactions.ts';

export const ENTITLEMENT_FLAGS = [
  'canTriggerPrecisionAnalysis',
  'canManageTransactions',
  'canViewSurveyResponsesOfTier1Suppliers',
  'canDownloadSurveyResponses',
  'canManageWebhooks',
  'canAccessApi',
  'canManageCmsSupplierRiskAssessmentStatuses',
  'canViewCmsSurveys',
  'canViewSupplierRiskScore',
] as const;
export type Entitlements = Record<(typeof ENTITLEMENT_FLAGS)[number], boolean>;

export interface SimulatorOptions {
  /** Default 4010; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 1: the dataset is a pure function of the seed. */
  seed?: number;
  /** Direct suppliers, default 5 (ignored when `layout` is given). */
  suppliers?: number;
  /** Total distinct plots across all businesses including the caller's own, default 2000 (ignored with `layout`). */
  plots?: number;
  /** Explicit layout: exact plot counts per supplier, private and shared upstream businesses. */
  layout?: LayoutSpec;
  /** Own plots of the calling business (GET /plots); default 1% of plots, 1..1000. */
  ownPlots?: number;
  /**
   * Vertices of every plot's outer ring, 3..100000; by default 5 to 9 at random. A surveyed or
   * cadastral boundary has hundreds or thousands: pages then weigh megabytes (bench:refresh --vertices).
   */
  vertices?: number;
  /**
   * Vertices of one plot's outer ring, 3..5000000: the first plot of the first direct supplier (on its
   * first page). A plot far larger than any other, to try a client's limits (about 25 bytes of JSON a
   * vertex: 2,000,000 make a plot of 50 MB).
   */
  hugePlotVertices?: number;
  /** Profile name (none, flaky, hostile), JSON string, or object. */
  faults?: Partial<FaultProfile> | string;
  /** Multiplies every simulated delay (1 = real time). */
  timeScale?: number;
  clientId?: string;
  clientSecret?: string;
  tokenLifetimeSeconds?: number;
  entitlements?: Partial<Entitlements>;
  /** false: PATCH /business-invitations/{id} answers 501. */
  invitationsEnabled?: boolean;
  /** Share of submitted transactions that end in ERROR (deterministic per seed and customId), default 0.1. */
  transactionErrorRatio?: number;
  transactionDelays?: TransactionDelays;
  /** Webhook delivery host map: hostname → 'host:port', delivered over plain http with the original Host header. */
  resolve?: Record<string, string>;
  /** Real-time grace during a webhook secret rotation in which both secrets sign (default 24 h × timeScale). */
  rotationGraceMs?: number;
  log?: (line: string) => void;
}

export interface ResolvedOptions {
  port: number;
  host: string;
  seed: number;
  suppliers: number;
  plots: number;
  layout?: LayoutSpec;
  ownPlots?: number;
  vertices?: number;
  hugePlotVertices?: number;
  faults: FaultProfile;
  timeScale: number;
  clientId: string;
  clientSecret: string;
  tokenLifetimeSeconds: number;
  entitlements: Entitlements;
  invitationsEnabled: boolean;
  transactionErrorRatio: number;
  transactionDelays: TransactionDelays;
  resolve: Record<string, string>;
  rotationGraceMs: number;
  log: (line: string) => void;
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

const isInt = (v: number, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  Number.isInteger(v) && v >= min && v <= max;

export function resolveOptions(o: SimulatorOptions): ResolvedOptions {
  const r: ResolvedOptions = {
    port: o.port ?? 4010,
    host: o.host ?? '127.0.0.1',
    seed: o.seed ?? 1,
    suppliers: o.suppliers ?? 5,
    plots: o.plots ?? 2000,
    faults: parseFaults(o.faults),
    timeScale: o.timeScale ?? 1,
    clientId: o.clientId ?? 'ddsync-demo',
    clientSecret: o.clientSecret ?? 'ddsync-demo-secret',
    tokenLifetimeSeconds: o.tokenLifetimeSeconds ?? 86_400,
    entitlements: Object.fromEntries(ENTITLEMENT_FLAGS.map((f) => [f, o.entitlements?.[f] ?? true])) as Entitlements,
    invitationsEnabled: o.invitationsEnabled ?? true,
    transactionErrorRatio: o.transactionErrorRatio ?? 0.1,
    transactionDelays: o.transactionDelays ?? {},
    resolve: o.resolve ?? {},
    rotationGraceMs: 0,
    log: o.log ?? (() => {}),
  };
  r.rotationGraceMs = o.rotationGraceMs ?? 86_400_000 * r.timeScale;
  if (o.layout) r.layout = o.layout;
  if (o.ownPlots !== undefined) r.ownPlots = o.ownPlots;
  if (o.vertices !== undefined) r.vertices = o.vertices;
  if (o.hugePlotVertices !== undefined) r.hugePlotVertices = o.hugePlotVertices;
  check(isInt(r.port, 0, 65535), 'port must be an integer from 0 to 65535');
  check(isInt(r.seed, 0, 0xffffffff), 'seed must be a non-negative integer below 2^32');
  check(isInt(r.suppliers, 1, 10_000), 'suppliers must be an integer from 1 to 10000');
  check(isInt(r.plots, 0, 100_000_000), 'plots must be a non-negative integer');
  check(r.ownPlots === undefined || isInt(r.ownPlots, 0, r.plots), 'ownPlots must be an integer from 0 to plots');
  check(r.vertices === undefined || isInt(r.vertices, 3, 100_000), 'vertices must be an integer from 3 to 100000');
  check(
    r.hugePlotVertices === undefined || isInt(r.hugePlotVertices, 3, 5_000_000),
    'hugePlotVertices must be an integer from 3 to 5000000',
  );
  check(Number.isFinite(r.timeScale) && r.timeScale >= 0, 'timeScale must be a non-negative number');
  check(isInt(r.tokenLifetimeSeconds, 0), 'tokenLifetimeSeconds must be a non-negative integer');
  check(r.transactionErrorRatio >= 0 && r.transactionErrorRatio <= 1, 'transactionErrorRatio must be between 0 and 1');
  for (const [host, target] of Object.entries(r.resolve))
    check(/^[^:\s]+:\d{1,5}$/.test(target), `resolve entry for ${host} must be host:port`);
  if (r.layout) {
    for (const [i, s] of r.layout.suppliers.entries())
      check(
        isInt(s.plots, 0) && (s.upstream ?? []).every((n) => isInt(n, 0)),
        `layout.suppliers[${i}] plot counts must be non-negative integers`,
      );
    check(r.layout.suppliers.length >= 1, 'layout.suppliers must list at least one supplier');
  }
  return r;
}
