import type { CreateTransactionInput, SupplierComponentInput } from '../../schema/upstream.ts';
import { base64Bytes, collectionBytes, EU_GEOLOCATION_LIMIT_BYTES } from '../eudr/eu-geojson.ts';

/**
 * The readiness gate's judgement of one row of a shipments file. Pure: what the warehouse knows of
 * the plots is handed in (readiness-gate.ts reads it).
 *
 * An internal-supplier component brings the plots of its supplier and of the supplier's upstream
 * businesses (the contract, "Transaction: Components"); the warehouse holds exactly that list per
 * direct supplier (plot_suppliers, filled from GET /businesses/{id}/plots). With `plotIds` the
 * component names the plots it brings, so only those are judged.
 *
 * What blocks (refused under `block`): a plot the warehouse knows is not ready (a current blocking
 * finding in bi_eudr_plot_readiness, whatever its code, so new checks count without a change here),
 * and the EU's per-statement limits. What only warns: what the gate cannot know (a supplier or plot
 * the warehouse does not have, data that is old or was never refreshed). The gate refuses on
 * evidence, never on the absence of it: that is said plainly instead (docs/submission.md).
 */

export type ReadinessPolicy = 'block' | 'warn' | 'off';
export const READINESS_POLICIES: readonly ReadinessPolicy[] = ['block', 'warn', 'off'];

export interface PlotFacts {
  id: string;
  ready: boolean;
  blockingCodes: string[];
  /** One producer of the statement: the plot's owner in its country (a Type I FeatureCollection each). */
  producer: string;
  /** Bytes of the plot's feature as the EU file carries it (eu-geojson.ts); 0 when it cannot be written. */
  featureBytes: number;
}

export interface ReadinessLimits {
  /** Geolocation per statement, measured as base64 of the compact GeoJSON (eu-geojson.ts). */
  geolocationBytes: number;
  producersPerCommodity: number;
  producersPerStatement: number;
}

/** Operator API Reference v1.0 §10.3 (and the XSD's maxOccurs="1000" for producers). */
export const EU_LIMITS: ReadinessLimits = {
  geolocationBytes: EU_GEOLOCATION_LIMIT_BYTES,
  producersPerCommodity: 1000,
  producersPerStatement: 10_000,
};

export type Freshness =
  | { state: 'fresh'; asOf: Date }
  | { state: 'stale'; asOf: Date; maxAgeMs: number }
  | { state: 'never' };

export type ReadinessCode =
  | 'plots_not_ready'
  | 'too_many_producers_per_commodity'
  | 'too_many_producers_per_statement'
  | 'geolocation_too_large'
  | 'supplier_unknown'
  | 'plot_unknown'
  | 'data_stale'
  | 'data_never_refreshed';

export interface ReadinessIssue {
  field: string;
  code: ReadinessCode;
  rule: string;
  /** Whether `block` refuses the row for it. */
  blocks: boolean;
}

/** Plots named in one rule: more are counted, not listed (a supplier may bring thousands). */
const PLOTS_NAMED = 5;

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export function describeFreshness(f: Freshness, now: Date): string | null {
  if (f.state === 'never')
    return 'the warehouse has never been refreshed: the readiness gate knows no plot and cannot vouch for any row (run ddsync refresh)';
  if (f.state === 'stale')
    return `the warehouse's last refresh finished ${ageText(now.getTime() - f.asOf.getTime())} ago (${f.asOf.toISOString()}), more than DDSYNC_SUBMIT_MAX_DATA_AGE (${ageText(f.maxAgeMs)}): the readiness gate judges by data that old`;
  return null;
}

function ageText(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d`;
}

function notReadyRule(supplierId: string, notReady: PlotFacts[], total: number): string {
  const named = notReady
    .slice(0, PLOTS_NAMED)
    .map((p) => `${p.id} (${p.blockingCodes.join(', ') || 'not ready'})`)
    .join('; ');
  const more = notReady.length > PLOTS_NAMED ? `; and ${plural(notReady.length - PLOTS_NAMED, 'more plot')}` : '';
  return `supplier ${supplierId} brings ${plural(notReady.length, 'plot')} of ${total.toLocaleString('en-US')} not ready for a statement: ${named}${more}`;
}

const suppliersOf = (c: SupplierComponentInput): Array<{ id: string; field: string }> => [
  ...(c.supplierBusinessId !== undefined ? [{ id: c.supplierBusinessId, field: 'supplierBusinessId' }] : []),
  ...(c.supplierBusinessIds ?? []).map((id, j) => ({ id, field: `supplierBusinessIds[${j}]` })),
];

/**
 * Every issue of a row. `plotsOf` gives a supplier's plots as the warehouse has them, or undefined
 * when it has none (not a supplier it has seen, or one without plots).
 */
export function judgeRow(
  body: CreateTransactionInput,
  plotsOf: (supplierId: string) => readonly PlotFacts[] | undefined,
  freshness: Freshness,
  limits: ReadinessLimits = EU_LIMITS,
): ReadinessIssue[] {
  const issues: ReadinessIssue[] = [];
  // Plots per commodity (HS heading: the statement lists commodities by heading), each plot once.
  const byCommodity = new Map<string, { field: string; plots: Map<string, PlotFacts> }>();
  let hasSupplierComponent = false;
  (body.components ?? []).forEach((component, i) => {
    if (!('supplierBusinessId' in component) && !('supplierBusinessIds' in component)) return;
    const c = component as SupplierComponentInput;
    hasSupplierComponent = true;
    const wanted = c.plotIds ? new Set(c.plotIds) : undefined;
    const heading = c.hsn.slice(0, 4);
    const commodity = byCommodity.get(heading) ?? { field: `components[${i}].hsn`, plots: new Map() };
    byCommodity.set(heading, commodity);
    for (const supplier of suppliersOf(c)) {
      const field = `components[${i}].${supplier.field}`;
      const all = plotsOf(supplier.id);
      if (!all || all.length === 0) {
        if (freshness.state !== 'never')
          issues.push({
            field,
            code: 'supplier_unknown',
            blocks: false,
            rule: `supplier ${supplier.id} has no plots in the warehouse (not a supplier the last refresh saw, or one without plots): the gate cannot vouch for what it brings`,
          });
        continue;
      }
      const brought = wanted ? all.filter((p) => wanted.has(p.id)) : all;
      if (wanted) {
        const known = new Set(brought.map((p) => p.id));
        const unknown = [...wanted].filter((id) => !known.has(id));
        if (unknown.length > 0)
          issues.push({
            field: `components[${i}].plotIds`,
            code: 'plot_unknown',
            blocks: false,
            rule: `${plural(unknown.length, 'plot')} not known to the warehouse as supplier ${supplier.id}'s: ${unknown.slice(0, PLOTS_NAMED).join(', ')}${unknown.length > PLOTS_NAMED ? ', …' : ''}: the gate cannot vouch for them`,
          });
      }
      for (const p of brought) commodity.plots.set(p.id, p);
      const notReady = brought.filter((p) => !p.ready);
      if (notReady.length > 0)
        issues.push({
          field,
          code: 'plots_not_ready',
          blocks: true,
          rule: notReadyRule(supplier.id, notReady, brought.length),
        });
    }
  });
  // The EU's per-statement limits: producers per commodity and per statement, geolocation size.
  let producersInStatement = 0;
  let statementBytes = 0;
  for (const { field, plots } of byCommodity.values()) {
    const producers = new Map<string, number[]>();
    for (const p of plots.values()) {
      const sizes = producers.get(p.producer) ?? [];
      if (p.featureBytes > 0) sizes.push(p.featureBytes);
      producers.set(p.producer, sizes);
    }
    producersInStatement += producers.size;
    for (const sizes of producers.values()) statementBytes += base64Bytes(collectionBytes(sizes));
    if (producers.size > limits.producersPerCommodity)
      issues.push({
        field,
        code: 'too_many_producers_per_commodity',
        blocks: true,
        rule: `brings ${plural(producers.size, 'producer')} for this commodity; the EU takes at most ${limits.producersPerCommodity.toLocaleString('en-US')} per commodity in one statement: split the row`,
      });
  }
  if (producersInStatement > limits.producersPerStatement)
    issues.push({
      field: 'components',
      code: 'too_many_producers_per_statement',
      blocks: true,
      rule: `brings ${plural(producersInStatement, 'producer')}; the EU takes at most ${limits.producersPerStatement.toLocaleString('en-US')} per statement: split the row`,
    });
  if (statementBytes > limits.geolocationBytes)
    issues.push({
      field: 'components',
      code: 'geolocation_too_large',
      blocks: true,
      rule: `brings ${(statementBytes / 1e6).toFixed(1)} MB of geolocation (base64 of the GeoJSON, as the statement carries it); the EU takes at most ${(limits.geolocationBytes / 1e6).toFixed(1)} MB per statement: split the row`,
    });
  if (hasSupplierComponent && freshness.state !== 'fresh')
    issues.push({
      field: '(warehouse)',
      code: freshness.state === 'never' ? 'data_never_refreshed' : 'data_stale',
      blocks: false,
      rule:
        freshness.state === 'never'
          ? 'the warehouse has never been refreshed: the gate cannot vouch for the plots this row brings'
          : `the warehouse's data is from ${freshness.asOf.toISOString()}, older than DDSYNC_SUBMIT_MAX_DATA_AGE: the gate judged by it`,
    });
  return issues;
}

/** A row's issues under a policy: what refuses it, and what is recorded with it when sent. */
export function applyPolicy(
  policy: ReadinessPolicy,
  issues: readonly ReadinessIssue[],
): { refuse: Array<{ field: string; rule: string }>; warnings: Array<{ field: string; code: string; rule: string }> } {
  if (policy === 'off') return { refuse: [], warnings: [] };
  const refused = policy === 'block' ? issues.filter((i) => i.blocks) : [];
  if (refused.length > 0)
    return { refuse: refused.map((i) => ({ field: i.field, rule: `readiness gate: ${i.rule}` })), warnings: [] };
  return { refuse: [], warnings: issues.map((i) => ({ field: i.field, code: i.code, rule: i.rule })) };
}
