// ddsync's Grafana dashboard, built with Grafana's foundation SDK: what an operator asks first, one row
// per question. tools/write-grafana-dashboard.ts writes it to deploy/grafana/dashboards/ddsync.json
// (`npm run dashboard`), which the compose stack's Grafana loads; test/unit/tools/grafana-dashboard.test.ts
// keeps the committed file equal to what this builds, and the extra suite (test/postgis/prometheus.test.ts)
// parses every expression with promtool and finds every metric it names in a real worker's scrape.
//
// The series are docs/production.md's ("Metrics and alerts"). Two rules shape the queries:
// - the warehouse's figures (ddsync_refresh_*, ddsync_supplier_*, ddsync_transactions*, ddsync_pdf_*,
//   ddsync_webhooks_failing) are the same in every process that reads the warehouse: combined with
//   max/min, never summed;
// - what a process did (ddsync_upstream_*, ddsync_webhook_deliveries_total, temporal_*) is its own:
//   summed over the processes.
//
// Built with the SDK's classic DashboardBuilder (the SDK marks it deprecated in favour of dashboardv2):
// Grafana's file provisioning, which the compose stack uses, loads the classic JSON model, and Grafana
// 12 and 13 migrate it on load; the v2 resources need the newer as-code provisioning.
import { fileURLToPath } from 'node:url';
import * as common from '@grafana/grafana-foundation-sdk/common';
import {
  type Dashboard,
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  type DynamicConfigValue,
  MappingType,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as BarGaugePanel } from '@grafana/grafana-foundation-sdk/bargauge';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanel } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesPanel } from '@grafana/grafana-foundation-sdk/timeseries';

export const DASHBOARD_FILE = fileURLToPath(new URL('../deploy/grafana/dashboards/ddsync.json', import.meta.url));
/** The dashboard's uid: its URL in Grafana is /d/ddsync. */
export const DASHBOARD_UID = 'ddsync';

/** Every panel queries the data source the `datasource` variable picks (the provisioned Prometheus by default). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, read by Grafana.
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The states of docs/production.md's ddsync_transactions: not final yet, and final. */
const IN_FLIGHT = 'pending|created|submitted';
const FINAL = 'available|error|withdrawn|failed|timed_out|cancelled';

/** One expression of a panel, drawn over time (range) or read once at the end of the range (instant). */
interface Query {
  expr: string;
  legend?: string;
  instant?: boolean;
}

const REF_IDS = 'ABCDEFGHIJ';
const targets = (queries: Query[]) =>
  queries.map((q, i) => {
    const target = new DataqueryBuilder().refId(REF_IDS[i]!).expr(q.expr).datasource(DATASOURCE);
    if (q.legend !== undefined) target.legendFormat(q.legend);
    return q.instant ? target.instant() : target.range();
  });

/** Green below each bound, then yellow, then red: the bounds are the alerts' (deploy/prometheus/alerts.yml). */
const thresholds = (yellow?: number, red?: number) =>
  new ThresholdsConfigBuilder()
    .mode(ThresholdsMode.Absolute)
    .steps([
      { value: null, color: 'green' },
      ...(yellow === undefined ? [] : [{ value: yellow, color: 'yellow' }]),
      ...(red === undefined ? [] : [{ value: red, color: 'red' }]),
    ]);

/** 1 is up (green), 0 is down (red): ddsync_dependency_up, ddsync_warehouse_figures_up. */
const UP_DOWN: ValueMapping[] = [
  {
    type: MappingType.ValueToText,
    options: { '0': { text: 'down', color: 'red', index: 0 }, '1': { text: 'up', color: 'green', index: 1 } },
  },
];

interface PanelSpec {
  title: string;
  description: string;
  queries: Query[];
  unit?: string;
  width: number;
  height?: number;
}

// Panel ids in the order panels are added, from 1 at each build: the same input writes the same file.
let nextId = 1;
const panelId = () => nextId++;

function stat(p: PanelSpec & { yellow?: number; red?: number; mappings?: ValueMapping[]; noValue?: string }) {
  const panel = new StatPanel()
    .id(panelId())
    .title(p.title)
    .description(p.description)
    .datasource(DATASOURCE)
    .span(p.width)
    .height(p.height ?? 4)
    .targets(targets(p.queries))
    .unit(p.unit ?? 'short')
    .thresholds(thresholds(p.yellow, p.red))
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false));
  if (p.mappings) panel.mappings(p.mappings);
  if (p.noValue !== undefined) panel.noValue(p.noValue);
  return panel;
}

function timeseries(p: PanelSpec & { stacked?: boolean; bars?: boolean; overrides?: Record<string, string> }) {
  const panel = new TimeseriesPanel()
    .id(panelId())
    .title(p.title)
    .description(p.description)
    .datasource(DATASOURCE)
    .span(p.width)
    .height(p.height ?? 8)
    .targets(targets(p.queries))
    .unit(p.unit ?? 'short')
    .min(0)
    .drawStyle(p.bars ? common.GraphDrawStyle.Bars : common.GraphDrawStyle.Line)
    .fillOpacity(p.bars || p.stacked ? 80 : 10)
    .stacking(
      new common.StackingConfigBuilder().mode(p.stacked ? common.StackingMode.Normal : common.StackingMode.None),
    )
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending),
    );
  // A fixed colour per series name where it carries meaning (5xx red, 2xx green).
  for (const [name, color] of Object.entries(p.overrides ?? {}))
    panel.overrideByName(name, [{ id: 'color', value: { mode: 'fixed', fixedColor: color } } as DynamicConfigValue]);
  return panel;
}

function bars(p: PanelSpec & { yellow?: number; red?: number }) {
  return new BarGaugePanel()
    .id(panelId())
    .title(p.title)
    .description(p.description)
    .datasource(DATASOURCE)
    .span(p.width)
    .height(p.height ?? 8)
    .targets(targets(p.queries))
    .unit(p.unit ?? 'short')
    .min(0)
    .thresholds(thresholds(p.yellow, p.red))
    .orientation(common.VizOrientation.Horizontal)
    .displayMode(common.BarGaugeDisplayMode.Basic)
    .showUnfilled(true)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false));
}

const HOUR = 3600;

/** The dashboard, as Grafana's classic JSON model (what file provisioning loads). */
export function ddsyncDashboard(): Dashboard {
  nextId = 1;
  const row = (title: string) => new RowBuilder(title).id(panelId());
  return (
    new DashboardBuilder('ddsync')
      .uid(DASHBOARD_UID)
      .description(
        "ddsync's worker and receiver metrics: freshness, refreshes, suppliers, the service's answers, bulk submissions, webhooks, the PDF archive and the Temporal worker (docs/production.md, Metrics and alerts).",
      )
      .tags(['ddsync'])
      .editable()
      .tooltip(DashboardCursorSync.Crosshair)
      .time({ from: 'now-24h', to: 'now' })
      .refresh('1m')
      .timezone('browser')
      // An empty list, not an empty object: Grafana adds its built-in annotations to the list on load.
      .annotations([])
      .withVariable(
        new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus').current({
          text: 'Prometheus',
          value: 'prometheus',
        }),
      )

      // -- Is the warehouse fresh? -------------------------------------------------------------------
      .withRow(row('Is the warehouse fresh?'))
      .withPanel(
        stat({
          title: 'Since the last successful refresh',
          description:
            'Time since the last successful refresh finished (ddsync_refresh_last_success_timestamp_seconds). Empty before the first one.',
          queries: [{ expr: 'time() - max(ddsync_refresh_last_success_timestamp_seconds)', instant: true }],
          unit: 's',
          width: 5,
          noValue: 'never',
        }),
      )
      .withPanel(
        stat({
          title: 'Age in schedule intervals',
          description: "That age divided by the worker's DDSYNC_REFRESH_INTERVAL: DdsyncRefreshStale fires above 2.",
          queries: [
            {
              expr: '(time() - max(ddsync_refresh_last_success_timestamp_seconds)) / max(ddsync_refresh_interval_seconds)',
              instant: true,
            },
          ],
          unit: 'none',
          width: 4,
          yellow: 1.5,
          red: 2,
        }),
      )
      .withPanel(
        stat({
          title: 'Suppliers failing',
          description:
            'Suppliers whose read failed in the latest refresh (ddsync_supplier_failed_scans_in_a_row > 0); DdsyncSupplierFailing fires at 3 in a row.',
          queries: [
            {
              expr: 'count(max by (supplier) (ddsync_supplier_failed_scans_in_a_row) > 0) or vector(0)',
              instant: true,
            },
          ],
          width: 4,
          yellow: 1,
        }),
      )
      .withPanel(
        stat({
          title: 'Warehouse figures readable',
          description:
            "Whether the processes could read the warehouse's figures at the last scrape (ddsync_warehouse_figures_up): while down, the warehouse's panels are empty.",
          queries: [{ expr: 'min(ddsync_warehouse_figures_up)', instant: true }],
          unit: 'none',
          width: 4,
          mappings: UP_DOWN,
        }),
      )
      .withPanel(
        stat({
          title: 'Dependencies',
          description:
            'Whether every process reaches its warehouse and Temporal now (ddsync_dependency_up, the worst process); DdsyncDependencyDown fires after 5 min down.',
          queries: [{ expr: 'min by (dependency) (ddsync_dependency_up)', legend: '{{dependency}}', instant: true }],
          unit: 'none',
          width: 7,
          mappings: UP_DOWN,
        }),
      )

      // -- What the last refreshes did ---------------------------------------------------------------
      .withRow(row('Refreshes: what they did and how long they took'))
      .withPanel(
        bars({
          title: 'Refreshes finished in the range, by outcome',
          description:
            'ddsync_refresh_runs_total: succeeded, partial (some suppliers failed), failed. "running" counts the one in progress now.',
          queries: [
            {
              expr: 'max by (outcome) (increase(ddsync_refresh_runs_total{outcome!="running"}[$__range]))',
              legend: '{{outcome}}',
              instant: true,
            },
            { expr: 'max(ddsync_refresh_runs_total{outcome="running"})', legend: 'running now', instant: true },
          ],
          width: 6,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Refresh duration',
          description:
            'Mean and 90th percentile of the refreshes that finished in the 24 h before each point (ddsync_refresh_duration_seconds; percentiles from its buckets).',
          queries: [
            {
              expr: 'max(increase(ddsync_refresh_duration_seconds_sum[1d])) / max(increase(ddsync_refresh_duration_seconds_count[1d]))',
              legend: 'mean',
            },
            {
              expr: 'histogram_quantile(0.9, max by (le) (increase(ddsync_refresh_duration_seconds_bucket[1d])))',
              legend: 'p90',
            },
          ],
          unit: 's',
          width: 6,
        }),
      )
      .withPanel(
        bars({
          title: 'Rows written in the range',
          description:
            'ddsync_refresh_rows_written_total by table and change (inserted, updated, deleted: soft-deleted).',
          queries: [
            {
              expr: 'sort_desc(max by (table, change) (increase(ddsync_refresh_rows_written_total[$__range])) > 0)',
              legend: '{{table}} {{change}}',
              instant: true,
            },
          ],
          width: 6,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Plots read and deletions',
          description:
            'Plots read by the refreshes (ddsync_refresh_plots_seen_total), plot links found missing: confirmed or deferred (ddsync_refresh_deletions_total), and deferred deletions waiting now (ddsync_refresh_deletions_waiting).',
          queries: [
            { expr: 'max(increase(ddsync_refresh_plots_seen_total[$__rate_interval]))', legend: 'plots read' },
            {
              expr: 'max by (outcome) (increase(ddsync_refresh_deletions_total[$__rate_interval]))',
              legend: 'deletions {{outcome}}',
            },
            { expr: 'max(ddsync_refresh_deletions_waiting)', legend: 'deletions waiting' },
          ],
          width: 6,
        }),
      )

      // -- Suppliers -----------------------------------------------------------------------------------
      .withRow(row('Suppliers'))
      .withPanel(
        bars({
          title: 'Suppliers failing: refreshes in a row',
          description:
            'Suppliers whose read failed in the latest refreshes, by business id (join bi_suppliers for the name); DdsyncSupplierFailing fires at 3.',
          queries: [
            {
              expr: 'sort_desc(max by (supplier) (ddsync_supplier_failed_scans_in_a_row) > 0)',
              legend: '{{supplier}}',
              instant: true,
            },
          ],
          width: 12,
          yellow: 1,
          red: 3,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Oldest complete read of a supplier',
          description:
            'Time since the supplier read longest ago was last read completely (ddsync_supplier_last_successful_scan_timestamp_seconds).',
          queries: [
            {
              expr: 'time() - min(ddsync_supplier_last_successful_scan_timestamp_seconds)',
              legend: 'oldest supplier read',
            },
            { expr: 'max(ddsync_refresh_interval_seconds)', legend: 'schedule interval' },
          ],
          unit: 's',
          width: 12,
        }),
      )

      // -- The service's answers ---------------------------------------------------------------------
      .withRow(row("The service's answers"))
      .withPanel(
        timeseries({
          title: 'Answers by class',
          description:
            'Requests to the due-diligence service per second by status class, over every process (ddsync_upstream_requests_total); token requests and retries included.',
          queries: [
            { expr: 'sum(rate(ddsync_upstream_requests_total{status=~"2.."}[$__rate_interval]))', legend: '2xx' },
            {
              expr: 'sum(rate(ddsync_upstream_requests_total{status=~"4..",status!="429"}[$__rate_interval]))',
              legend: '4xx',
            },
            { expr: 'sum(rate(ddsync_upstream_requests_total{status="429"}[$__rate_interval]))', legend: '429' },
            { expr: 'sum(rate(ddsync_upstream_requests_total{status=~"5.."}[$__rate_interval]))', legend: '5xx' },
            {
              expr: 'sum(rate(ddsync_upstream_requests_total{status="network_error"}[$__rate_interval]))',
              legend: 'network error',
            },
          ],
          unit: 'reqps',
          width: 8,
          stacked: true,
          overrides: { '2xx': 'green', '4xx': 'orange', '429': 'purple', '5xx': 'red', 'network error': 'dark-red' },
        }),
      )
      .withPanel(
        timeseries({
          title: 'Latency by endpoint (p95)',
          description:
            'Time to the response headers, 95th percentile per endpoint (ddsync_upstream_request_duration_seconds).',
          queries: [
            {
              expr: 'histogram_quantile(0.95, sum by (le, endpoint) (rate(ddsync_upstream_request_duration_seconds_bucket[$__rate_interval])))',
              legend: '{{endpoint}}',
            },
          ],
          unit: 's',
          width: 8,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Retries, 429s and tokens',
          description:
            'Requests repeated after a failure by reason (ddsync_upstream_retries_total), 429 answers by endpoint (ddsync_upstream_rate_limited_total) and access tokens obtained (ddsync_upstream_token_refreshes_total), per minute.',
          queries: [
            {
              expr: 'sum by (reason) (rate(ddsync_upstream_retries_total[$__rate_interval])) * 60',
              legend: 'retry: {{reason}}',
            },
            {
              expr: 'sum by (endpoint) (rate(ddsync_upstream_rate_limited_total[$__rate_interval])) * 60',
              legend: '429: {{endpoint}}',
            },
            { expr: 'sum(rate(ddsync_upstream_token_refreshes_total[$__rate_interval])) * 60', legend: 'tokens' },
          ],
          unit: 'short',
          width: 8,
        }),
      )

      // -- Bulk submissions --------------------------------------------------------------------------
      .withRow(row('Bulk submissions'))
      .withPanel(
        stat({
          title: 'In flight',
          description: 'Transactions without a final status: pending, created, submitted (ddsync_transactions).',
          queries: [{ expr: `sum(max by (state) (ddsync_transactions{state=~"${IN_FLIGHT}"}))`, instant: true }],
          width: 4,
          height: 8,
        }),
      )
      .withPanel(
        stat({
          title: 'Oldest waiting for a final status',
          description:
            'Since when the oldest transaction without a final status waits (ddsync_transactions_oldest_not_final_timestamp_seconds); the alerts fire at 3 h and 1 day.',
          queries: [{ expr: 'time() - min(ddsync_transactions_oldest_not_final_timestamp_seconds)', instant: true }],
          unit: 's',
          width: 4,
          yellow: 3 * HOUR,
          red: 24 * HOUR,
          height: 8,
          noValue: 'none waiting',
        }),
      )
      .withPanel(
        timeseries({
          title: 'Transactions in flight, by state',
          description: 'ddsync_transactions for the states that are not final.',
          queries: [{ expr: `max by (state) (ddsync_transactions{state=~"${IN_FLIGHT}"})`, legend: '{{state}}' }],
          width: 6,
          stacked: true,
        }),
      )
      .withPanel(
        bars({
          title: 'Outcomes',
          description:
            'Transactions by final state, all time (ddsync_transactions): available, error, withdrawn, failed, timed_out, cancelled.',
          queries: [
            { expr: `max by (state) (ddsync_transactions{state=~"${FINAL}"})`, legend: '{{state}}', instant: true },
          ],
          width: 5,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Time to a final status',
          description:
            'From handing a transaction over to its final status, for the transactions answered in the 24 h before each point (ddsync_transaction_time_to_final_seconds); the EU system answers in 20-90 min.',
          queries: [
            {
              expr: 'histogram_quantile(0.5, max by (le) (increase(ddsync_transaction_time_to_final_seconds_bucket[1d])))',
              legend: 'p50',
            },
            {
              expr: 'histogram_quantile(0.9, max by (le) (increase(ddsync_transaction_time_to_final_seconds_bucket[1d])))',
              legend: 'p90',
            },
          ],
          unit: 's',
          width: 5,
        }),
      )

      // -- Webhooks and the PDF archive ---------------------------------------------------------------
      .withRow(row('Webhook receiver and PDF archive'))
      .withPanel(
        timeseries({
          title: 'Webhook deliveries',
          description:
            'Deliveries the receiver answered per minute, accepted or rejected by reason (ddsync_webhook_deliveries_total); DdsyncWebhookRejectionsSpiking fires above one rejected a minute.',
          queries: [
            {
              expr: 'sum by (outcome, reason) (rate(ddsync_webhook_deliveries_total[$__rate_interval])) * 60',
              legend: '{{outcome}}: {{reason}}',
            },
          ],
          width: 8,
        }),
      )
      .withPanel(
        stat({
          title: 'Webhooks failing at the service',
          description:
            'Webhooks whose latest delivery attempt failed, as the service reports (ddsync_webhooks_failing).',
          queries: [{ expr: 'max(ddsync_webhooks_failing)', instant: true }],
          width: 4,
          red: 1,
          height: 8,
        }),
      )
      .withPanel(
        stat({
          title: 'PDF backlog',
          description:
            'Survey-response PDFs queued, waiting or retrying (ddsync_pdf_archive_entries); DdsyncPdfBacklog fires after a day.',
          queries: [
            {
              expr: 'sum(max by (state) (ddsync_pdf_archive_entries{state=~"queued|waiting|retrying"}))',
              instant: true,
            },
          ],
          width: 4,
          yellow: 1,
          height: 8,
        }),
      )
      .withPanel(
        timeseries({
          title: 'PDF archive by state',
          description: 'The PDF archive queue: queued, waiting, retrying, archived, gone (ddsync_pdf_archive_entries).',
          queries: [{ expr: 'max by (state) (ddsync_pdf_archive_entries)', legend: '{{state}}' }],
          width: 8,
        }),
      )

      // -- The Temporal worker -------------------------------------------------------------------------
      .withRow(row('Temporal worker'))
      .withPanel(
        timeseries({
          title: 'Task slots',
          description:
            'Slots in use per worker type, over every worker (temporal_worker_task_slots_used); a type at its limit (used + available) makes its tasks wait.',
          queries: [
            { expr: 'sum by (worker_type) (temporal_worker_task_slots_used)', legend: '{{worker_type}} used' },
            {
              expr: 'sum by (worker_type) (temporal_worker_task_slots_used + temporal_worker_task_slots_available)',
              legend: '{{worker_type}} limit',
            },
          ],
          width: 6,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Schedule-to-start latency (p95)',
          description:
            'How long tasks waited for a worker to take them (temporal_workflow_task_schedule_to_start_latency_seconds, temporal_activity_schedule_to_start_latency_seconds): growing means too few worker slots or workers.',
          queries: [
            {
              expr: 'histogram_quantile(0.95, sum by (le) (rate(temporal_workflow_task_schedule_to_start_latency_seconds_bucket[$__rate_interval])))',
              legend: 'workflow tasks',
            },
            {
              expr: 'histogram_quantile(0.95, sum by (le) (rate(temporal_activity_schedule_to_start_latency_seconds_bucket[$__rate_interval])))',
              legend: 'activity tasks',
            },
          ],
          unit: 's',
          width: 6,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Poll latency (p95)',
          description:
            'Long-poll latency by operation (temporal_long_request_latency_seconds). A poll that finds no work waits up to a minute, so an idle worker shows high values and a busy one milliseconds; high while schedule-to-start grows points at the connection to Temporal.',
          queries: [
            {
              expr: 'histogram_quantile(0.95, sum by (le, operation) (rate(temporal_long_request_latency_seconds_bucket{operation=~"Poll.*"}[$__rate_interval])))',
              legend: '{{operation}}',
            },
          ],
          unit: 's',
          width: 6,
        }),
      )
      .withPanel(
        timeseries({
          title: 'Pollers',
          description: 'Pollers open per poller type, over every worker (temporal_num_pollers).',
          queries: [{ expr: 'sum by (poller_type) (temporal_num_pollers)', legend: '{{poller_type}}' }],
          width: 6,
        }),
      )
      .build()
  );
}

/** The file's text: two-space JSON and a final newline, as committed. */
export function dashboardJson(): string {
  return `${JSON.stringify(ddsyncDashboard(), null, 2)}\n`;
}
