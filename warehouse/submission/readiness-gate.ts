import type { CreateTransactionInput } from '../../schema/upstream.ts';
import type { Warehouse } from '../database.ts';
import { featureBytes, plotFeature } from '../../domain/eudr/eu-geojson.ts';
import { lastRefreshFinishedAt, plotsOfSuppliers } from '../export/statement-plots.ts';
import {
  applyPolicy,
  describeFreshness,
  EU_LIMITS,
  type Freshness,
  judgeRow,
  type PlotFacts,
  type ReadinessLimits,
  type ReadinessPolicy,
} from '../../domain/submission/readiness-rules.ts';

/**
 * The readiness gate as the intake uses it: reads what the warehouse knows of the suppliers a chunk
 * of rows names (once per supplier per file: a file of 100,000 rows usually names a few suppliers)
 * and judges each row by readiness-rules.ts.
 */
export interface ReadinessGateOptions {
  policy: ReadinessPolicy;
  /** Data older than this is said to be stale. */
  maxDataAgeMs: number;
  limits?: ReadinessLimits;
  now?: () => Date;
}

export interface ReadinessGate {
  policy: ReadinessPolicy;
  freshness: Freshness | null;
  /** A sentence on the data the gate judged by, when it is stale or missing. */
  note: string | null;
  judge(rows: ReadonlyArray<{ body: CreateTransactionInput }>): Promise<
    Array<{
      refuse: Array<{ field: string; rule: string }>;
      warnings: Array<{ field: string; code: string; rule: string }>;
    }>
  >;
}

const supplierIdsOf = (body: CreateTransactionInput): string[] =>
  (body.components ?? []).flatMap((c) => [
    ...('supplierBusinessId' in c && c.supplierBusinessId !== undefined ? [c.supplierBusinessId] : []),
    ...('supplierBusinessIds' in c ? (c.supplierBusinessIds ?? []) : []),
  ]);

export async function openReadinessGate(db: Warehouse, o: ReadinessGateOptions): Promise<ReadinessGate> {
  const now = o.now?.() ?? new Date();
  if (o.policy === 'off')
    return {
      policy: 'off',
      freshness: null,
      note: null,
      judge: async (rows) => rows.map(() => ({ refuse: [], warnings: [] })),
    };
  const finishedAt = await lastRefreshFinishedAt(db);
  const freshness: Freshness = !finishedAt
    ? { state: 'never' }
    : now.getTime() - finishedAt.getTime() > o.maxDataAgeMs
      ? { state: 'stale', asOf: finishedAt, maxAgeMs: o.maxDataAgeMs }
      : { state: 'fresh', asOf: finishedAt };
  const known = new Map<string, PlotFacts[]>();
  return {
    policy: o.policy,
    freshness,
    note: describeFreshness(freshness, now),
    judge: async (rows) => {
      const missing = [...new Set(rows.flatMap((r) => supplierIdsOf(r.body)))].filter((id) => !known.has(id));
      if (missing.length > 0) {
        for (const id of missing) known.set(id, []);
        for (const p of await plotsOfSuppliers(db, missing)) {
          const feature = plotFeature(p);
          known.get(p.supplierId)?.push({
            id: p.id,
            ready: p.ready,
            blockingCodes: p.blockingCodes,
            producer: `${p.ownerId ?? p.supplierId}|${p.countryCode ?? ''}`,
            featureBytes: feature.ok ? featureBytes(feature.feature) : 0,
          });
        }
      }
      return rows.map((r) =>
        applyPolicy(
          o.policy,
          judgeRow(r.body, (id) => known.get(id), freshness, o.limits ?? EU_LIMITS),
        ),
      );
    },
  };
}
