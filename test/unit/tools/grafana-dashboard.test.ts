import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DASHBOARD_FILE, DASHBOARD_UID, dashboardJson } from '../../../tools/grafana-dashboard.ts';
import { DdsyncMetrics } from '../../../platform/metrics.ts';
import {
  asPrometheusExpr,
  isServed,
  metricNames,
  panelQueries,
  servedFamilies,
} from '../../support/dashboard-queries.ts';

/**
 * The Grafana dashboard (deploy/grafana/dashboards/ddsync.json) read without Grafana: the committed
 * file is what tools/grafana-dashboard.ts builds now, every panel asks the provisioned Prometheus, and
 * every ddsync metric it names is one platform/metrics.ts defines. That the expressions parse and that
 * a running worker serves every name (temporal_* included) is checked by the extra suite
 * (test/postgis/prometheus.test.ts), where promtool is installed.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Panel {
  id?: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ refId?: string; expr?: string; datasource?: { uid?: string } }>;
  panels?: Panel[];
}
interface DashboardModel {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: string; current?: { value?: string } }> };
}

const committed = readFileSync(DASHBOARD_FILE, 'utf8');
const dashboard = JSON.parse(committed) as DashboardModel;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queries = panelQueries(dashboard);

/** Where a panel overlaps another or leaves Grafana's 24 columns. */
function layoutProblems(list: Panel[]): string[] {
  const problems: string[] = [];
  list.forEach((a, i) => {
    if (a.gridPos.x < 0 || a.gridPos.x + a.gridPos.w > 24) problems.push(`${a.title}: outside the 24 columns`);
    for (const b of list.slice(i + 1)) {
      const apart =
        a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
        b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
        a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
        b.gridPos.y + b.gridPos.h <= a.gridPos.y;
      if (!apart) problems.push(`${a.title} overlaps ${b.title}`);
    }
  });
  return problems;
}

/** The warehouse's figures: the same in every process that reads the warehouse (docs/production.md). */
const WAREHOUSE_FIGURE = /^ddsync_(refresh_|supplier_|transaction|pdf_|webhooks_failing)/;
const AGGREGATIONS = new Set([
  'sum',
  'avg',
  'max',
  'min',
  'count',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
]);

/**
 * Warehouse figures summed (or averaged, or not aggregated at all) over the processes: a stack of
 * two workers and a receiver would show three times the refreshes. The aggregation nearest to each
 * such name must be max, min or count.
 */
function aggregationProblems(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without)\s*\([^)]*\)/g, ' ');
  const problems: string[] = [];
  // The function or aggregation each open parenthesis belongs to ('' for a plain one).
  const stack: string[] = [];
  let opening = '';
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*|[()]/g)) {
    const token = m[0];
    if (token === '(') {
      stack.push(opening);
      opening = '';
    } else if (token === ')') stack.pop();
    else if (/^\s*\(/.test(stripped.slice(m.index + token.length))) opening = token;
    else if (WAREHOUSE_FIGURE.test(token)) {
      const nearest = [...stack].reverse().find((f) => AGGREGATIONS.has(f));
      if (nearest !== 'max' && nearest !== 'min' && nearest !== 'count')
        problems.push(`${token} is ${nearest ? `combined with ${nearest}` : 'not combined'}: use max or min`);
    }
  }
  return problems;
}

describe('the Grafana dashboard', () => {
  it('is committed as tools/grafana-dashboard.ts builds it now (npm run dashboard writes it)', () => {
    expect(committed).toBe(dashboardJson());
    expect(dashboard.uid).toBe(DASHBOARD_UID);
  });

  it('answers the questions of docs/production.md, one row each, in 24 columns without overlaps', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual([
      'Is the warehouse fresh?',
      'Refreshes: what they did and how long they took',
      'Suppliers',
      "The service's answers",
      'Bulk submissions',
      'Webhook receiver and PDF archive',
      'Temporal worker',
    ]);
    expect(layoutProblems(panels)).toEqual([]);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels.filter((p) => p.type !== 'row')) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
    }
    // The service's answers by class, as asked: 2xx, 4xx, 5xx and 429 apart.
    const answers = queries.filter((q) => q.panel === 'Answers by class').map((q) => q.expr);
    for (const selector of ['status=~"2.."', 'status=~"4..",status!="429"', 'status="429"', 'status=~"5.."'])
      expect(
        answers.filter((e) => e.includes(`{${selector}}`)),
        selector,
      ).toHaveLength(1);
  });

  it('asks the provisioned Prometheus in every panel, through the datasource variable', () => {
    const provisioned = parse(
      readFileSync(`${ROOT}/deploy/grafana/provisioning/datasources/prometheus.yml`, 'utf8'),
    ) as {
      datasources: Array<{ uid: string; type: string; isDefault?: boolean }>;
    };
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const prometheus = provisioned.datasources.filter((d) => d.type === 'prometheus');
    expect(prometheus).toHaveLength(1);
    expect(prometheus[0]).toMatchObject({ uid: variable?.current?.value, isDefault: true });
    for (const p of panels.filter((p) => p.type !== 'row')) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets ?? []) expect(t.datasource?.uid, `${p.title} ${t.refId}`).toBe('${datasource}');
    }
  });

  it("names only metrics ddsync defines (platform/metrics.ts) or the Temporal core's", async () => {
    const families = servedFamilies(await new DdsyncMetrics({ processMetrics: false }).text());
    expect(families.get('ddsync_refresh_duration_seconds')).toBe('histogram');
    const names = new Set(queries.flatMap((q) => metricNames(q.expr)));
    const unknown = [...names].filter((n) =>
      n.startsWith('ddsync_') ? !isServed(n, families) : !n.startsWith('temporal_'),
    );
    expect(unknown).toEqual([]);
    // Every family ddsync defines is on the dashboard, but the ones a panel has no use for.
    const shown = new Set([...names].map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    const notShown = [...families.keys()].filter((f) => !shown.has(f));
    expect(notShown).toEqual([]);
    expect([...names].filter((n) => n.startsWith('temporal_')).sort()).toEqual([
      'temporal_activity_schedule_to_start_latency_seconds_bucket',
      'temporal_long_request_latency_seconds_bucket',
      'temporal_num_pollers',
      'temporal_worker_task_slots_available',
      'temporal_worker_task_slots_used',
      'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
    ]);
  });

  it("combines the warehouse's figures with max or min, never sum: they are the same in every process", () => {
    expect(queries.flatMap((q) => aggregationProblems(q.expr).map((p) => `${q.panel} ${q.refId}: ${p}`))).toEqual([]);
    expect(aggregationProblems('sum by (state) (ddsync_transactions{state=~"a|b"})')).toEqual([
      'ddsync_transactions is combined with sum: use max or min',
    ]);
    expect(aggregationProblems('time() - ddsync_refresh_last_success_timestamp_seconds')).toEqual([
      'ddsync_refresh_last_success_timestamp_seconds is not combined: use max or min',
    ]);
    expect(
      aggregationProblems(
        'sum(max by (state) (ddsync_pdf_archive_entries)) + sum(rate(ddsync_upstream_requests_total[5m]))',
      ),
    ).toEqual([]);
  });
});

describe('the PromQL reader the dashboard tests use', () => {
  it('finds the metric names of an expression and nothing else', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, endpoint) (rate(a_seconds_bucket{endpoint=~"GET /x{id}", s!="y"}[$__rate_interval]))) / on (x) group_left(y) b_total offset 5m > 1e3 or vector(0)',
      ),
    ).toEqual(['a_seconds_bucket', 'b_total']);
    expect(metricNames('time() - max(c) > bool 2 * max(d) unless on() e')).toEqual(['c', 'd', 'e']);
  });

  it("replaces Grafana's interval variables by durations, and refuses one it does not know", () => {
    expect(asPrometheusExpr('rate(x[$__rate_interval]) + increase(y[$__range]) + rate(z[${__interval}])')).toBe(
      'rate(x[2m]) + increase(y[1d]) + rate(z[1m])',
    );
    expect(() => asPrometheusExpr('rate(x[$__auto])')).toThrow(/\$__auto: a Grafana variable/);
  });

  it('counts a histogram as served by its _bucket, _sum and _count only', () => {
    const families = servedFamilies('# TYPE h histogram\n# TYPE c_total counter\n# TYPE g gauge\ng 1\n');
    expect(['h_bucket', 'h_sum', 'h_count', 'c_total', 'g'].every((n) => isServed(n, families))).toBe(true);
    expect(['h', 'g_count', 'c', 'missing'].some((n) => isServed(n, families))).toBe(false);
  });
});
