/**
 * The PromQL of a Grafana dashboard (deploy/grafana/dashboards/*.json), read for the tests that check it
 * without Grafana: the expressions of every panel, the metric names each one reads, the expressions as
 * Prometheus itself would take them (Grafana's variables replaced), and which names an exposition serves.
 */

export interface PanelQuery {
  panel: string;
  refId: string;
  expr: string;
}

interface PanelJson {
  title?: string;
  type?: string;
  targets?: Array<{ refId?: string; expr?: string }>;
  panels?: PanelJson[];
}

/** Every query of every panel, rows' nested panels included. */
export function panelQueries(dashboard: { panels?: PanelJson[] }): PanelQuery[] {
  const out: PanelQuery[] = [];
  const visit = (panels: PanelJson[]) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) out.push({ panel: p.title ?? '', refId: t.refId ?? '', expr: t.expr ?? '' });
      visit(p.panels ?? []);
    }
  };
  visit(dashboard.panels ?? []);
  return out;
}

/**
 * Grafana's interval variables as Prometheus durations, so that Prometheus's own parser can read the
 * expression; the values do not matter to a parser, only that they are durations.
 */
const GRAFANA_DURATIONS: Record<string, string> = {
  $__rate_interval: '2m',
  $__interval: '1m',
  $__range: '1d',
};

export function asPrometheusExpr(expr: string): string {
  return expr.replace(/\$__[a-z_]+|\$\{__[a-z_]+\}/g, (v) => {
    const name = v.replace(/^\$\{/, '$').replace(/\}$/, '');
    const duration = GRAFANA_DURATIONS[name];
    if (duration === undefined) throw new Error(`${v}: a Grafana variable this test does not know`);
    return duration;
  });
}

/** Words of PromQL that are not metric names when they stand alone. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'and',
  'or',
  'unless',
  'atan2',
  'inf',
  'nan',
]);

/**
 * The metric names an expression reads: identifiers left once strings, label matchers, ranges and
 * grouping clauses are taken out, that are neither functions (followed by a parenthesis), keywords,
 * nor parts of numbers and durations. Selectors that name the metric only as {__name__="…"} are
 * not followed; the dashboard writes none.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = stripped[m.index - 1];
    if (before !== undefined && /[0-9.]/.test(before)) continue;
    if (/^\s*\(/.test(stripped.slice(m.index + m[0].length))) continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** The metric families an exposition declares (# TYPE lines), with their types. */
export function servedFamilies(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const m of exposition.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)) families.set(m[1]!, m[2]!);
  return families;
}

/**
 * Whether a name a query reads is served: a family the exposition declares (a counter declared with
 * no sample yet counts: its series appear with the first event), or the _bucket, _sum or _count of a
 * declared histogram (or _sum, _count of a summary).
 */
export function isServed(name: string, families: Map<string, string>): boolean {
  if (families.has(name)) return families.get(name) !== 'histogram' && families.get(name) !== 'summary';
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (!m) return false;
  const type = families.get(m[1]!);
  return type === 'histogram' || (type === 'summary' && m[2] !== 'bucket');
}
