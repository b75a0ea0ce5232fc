// What bench/refresh.ts prints: figures and ratios against baselines measured in the same run,
// with the targets beside them. Figures only: nothing here passes or fails on time.
import { BUILT_CLI, BUILT_WORKFLOW_BUNDLE } from '../../infra/production.ts';
import type { SpatialFacts } from './postgis.ts';
import type { StatementCost } from './pg-stats.ts';

export interface RefreshBenchResult {
  plots: number;
  suppliers: number;
  /** Vertices of every plot's outer ring, when not the simulator's default 5 to 9. */
  vertices?: number;
  fetchOnlySeconds: number;
  fetchOnlyPlots: number;
  fetchOnlyPages: number;
  fetchOnlyPlotsPerSec: number;
  copyOnlySeconds: number;
  copyOnlyRows: number;
  copyOnlyStatements: number;
  copyOnlyMegabytes: number;
  copyOnlyRowsPerSec: number;
  fullSeconds: number;
  fullPlotsSeen: number;
  fullPages: number;
  fullRowsWritten: number;
  fullStatus: string;
  fullPlotsPerSec: number;
  /** Of fullSeconds, the closing activity (sweep, totals); null when the history did not show it. */
  fullFinishSeconds: number | null;
  /** finishRefresh's steps in seconds (sweep, statistics, overlaps, duplicates, summaries), from the worker's log. */
  fullFinishSteps: Record<string, number> | null;
  fullToCopyRatio: number;
  /** Full refresh's plots/s ÷ fetch-only's: what writing the warehouse costs on top of reading (goal ≥ 0.7). */
  fullToFetchRatio: number;
  /** The ceiling of fullToCopyRatio: a refresh cannot outrun the reads it is made of. */
  fetchOnlyToCopyRatio: number;
  noChangeSeconds: number;
  noChangePlotsSeen: number;
  noChangeStatus: string;
  noChangeFinishSeconds: number | null;
  noChangeFinishSteps: Record<string, number> | null;
  noChangeToFetchRatio: number;
  noChangeRowsWritten: number;
  /** Mirrored tables whose row versions (ctid, xmin) moved during the no-change refresh. */
  noChangeTablesTouched: string[];
  /** Worker VmHWM over both refreshes (start-up excluded when the peak could be reset). */
  peakRssMb: number;
  peakRssCoversStartup: boolean;
  /** What the full refresh left in the warehouse: equal digests, equal warehouses (support/warehouse-digest.ts). */
  fullWarehouse: string;
  hugePlotVertices?: number;
  /** Worker processes on the task queue (peak RSS is the highest of them; CPU is per worker). */
  workers: number;
  /** Node flags of the worker process (heap limits). */
  workerNodeFlags: string[];
  /** Highest VmRSS sampled during each refresh. */
  fullSampledRssMb: number;
  noChangeSampledRssMb: number;
  /** The worker's RSS by mapping (MB) when each refresh's highest RSS was sampled. */
  fullRssByMapping: Record<string, number>;
  noChangeRssByMapping: Record<string, number>;
  /** Worker VmHWM when it became ready (the prebuilt workflow bundle loaded). */
  workerStartupPeakRssMb: number;
  /** Highest RSS of the benchmark process itself during the COPY baseline (its memory bound). */
  benchCopyPhaseRssMb: number;
  /** Wall time of each phase, setup and teardown included. */
  phaseSeconds: Record<string, number>;
  /** CPU seconds per process during each phase (fetch-only: the benchmark's client and the simulator). */
  cpuSeconds: Record<'fetchOnly' | 'full' | 'noChange', Record<string, number>>;
  /** With --ceiling: the most a full refresh could do here (bench/support/ceiling.ts). */
  ceiling?: CeilingFigures;
  /** With --ceiling: full refresh plots/s ÷ ceiling plots/s, both measured in this run (goal ≥ 0.8; 0.7 at 1M). */
  fullToCeilingRatio?: number;
  /** With --ceiling-keys: the ceiling again, into bare tables with their primary keys (what refusing duplicates costs). */
  keyedCeiling?: CeilingFigures;
  /** With --ceiling-keys: full refresh plots/s ÷ keyed ceiling plots/s. */
  fullToKeyedCeilingRatio?: number;
  /** With --postgis: the full and no-change refreshes into a warehouse without and one with PostGIS, one server. */
  postgis?: PostgisComparison;
  /** With --postgis: PostGIS full refresh seconds ÷ plain full refresh seconds, same run, same server (goal ≤ 1.1). */
  postgisToPlainFullRatio?: number;
  /** With --pg-stats: the full refresh's costliest statements (pg_stat_statements). */
  fullStatements?: StatementCost[];
  /** With --pg-stats: the no-change refresh's. */
  noChangeStatements?: StatementCost[];
}

export interface CeilingFigures {
  seconds: number;
  plots: number;
  rows: number;
  plotsPerSec: number;
  /** Its plots/s ÷ fetch-only's: an upper bound for fullToFetchRatio on this machine. */
  toFetchRatio: number;
  /** The same if its CPU seconds (all processes) had kept every core busy the whole time: a firmer bound. */
  cpuBoundToFetchRatio: number;
  /** CPU seconds of the benchmark process (read, map, encode), Postgres and the simulator. */
  cpu: Record<string, number>;
}

export interface PostgisComparison {
  server: string;
  plain: PostgisRefresh;
  postgis: PostgisRefresh;
  /** Seconds ÷ seconds (so above 1 is slower): the goal is ≤ 1.1. */
  postgisToPlainFullRatio: number;
  /** The same of the CPU seconds all processes spent on it: steadier than wall time on a shared machine. */
  postgisToPlainFullCpuRatio: number;
  postgisToPlainNoChangeRatio: number;
}

export interface PostgisRefresh {
  fullSeconds: number;
  fullRowsWritten: number;
  fullPlotsSeen: number;
  fullFinishSeconds: number | null;
  noChangeSeconds: number;
  noChangeRowsWritten: number;
  noChangeTablesTouched: string[];
  /** CPU seconds per process (worker, postgres: the cluster, simulator) during each refresh. */
  cpuSeconds: Record<'full' | 'noChange', Record<string, number>>;
  spatial: SpatialFacts;
}

const n0 = (v: number) => Math.round(v).toLocaleString('en-US');
const n2 = (v: number) => v.toFixed(2);
const seconds = (v: number | null) => (v === null ? 'n/a' : `${n2(v)} s`);
const steps = (v: Record<string, number> | null) =>
  v === null
    ? ''
    : ` (${Object.entries(v)
        .map(([step, s]) => `${step} ${n2(s)}`)
        .join(', ')})`;
const mark = (ok: boolean) => (ok ? 'ok' : 'MISSED');

export function formatReport(r: RefreshBenchResult): string {
  const rowsOk = r.noChangeRowsWritten === 0 && r.noChangeTablesTouched.length === 0;
  const lines = [
    `refresh benchmark: ${n0(r.plots)} plots${r.vertices === undefined ? '' : ` of ${n0(r.vertices)} vertices`}${r.hugePlotVertices === undefined ? '' : `, one of ${n0(r.hugePlotVertices)}`}, ${r.suppliers} suppliers (4 at a time), ${r.workers} worker${r.workers === 1 ? '' : 's'}, embedded Postgres + Temporal dev server`,
    '',
    `fetch-only      ${n2(r.fetchOnlySeconds).padStart(8)} s  ${n0(r.fetchOnlyPlotsPerSec).padStart(8)} plots/s   (${n0(r.fetchOnlyPlots)} plots incl. shared duplicates, ${n0(r.fetchOnlyPages)} pages/batches)`,
    `COPY-only       ${n2(r.copyOnlySeconds).padStart(8)} s  ${n0(r.copyOnlyRowsPerSec).padStart(8)} rows/s    (${n0(r.copyOnlyRows)} distinct plot rows, ${n2(r.copyOnlyMegabytes)} MB of COPY text, ${r.copyOnlyStatements} COPY statement(s))`,
    ...(r.ceiling
      ? [
          `ceiling         ${n2(r.ceiling.seconds).padStart(8)} s  ${n0(r.ceiling.plotsPerSec).padStart(8)} plots/s   (read, map, COPY every row into bare unlogged tables: no index, upsert, history or ledger; ${n0(r.ceiling.rows)} rows)`,
        ]
      : []),
    ...(r.keyedCeiling
      ? [
          `keyed ceiling   ${n2(r.keyedCeiling.seconds).padStart(8)} s  ${n0(r.keyedCeiling.plotsPerSec).padStart(8)} plots/s   (the same into bare tables with their primary keys: what refusing a second copy of a row costs)`,
        ]
      : []),
    `full refresh    ${n2(r.fullSeconds).padStart(8)} s  ${n0(r.fullPlotsPerSec).padStart(8)} plots/s   (${n0(r.fullPlotsSeen)} plots seen, ${n0(r.fullPages)} pages, ${n0(r.fullRowsWritten)} rows written, ${r.fullStatus})`,
    `no-change       ${n2(r.noChangeSeconds).padStart(8)} s  ${n0(r.noChangePlotsSeen / r.noChangeSeconds).padStart(8)} plots/s   (${n0(r.noChangePlotsSeen)} plots seen, ${r.noChangeStatus})`,
    `  of which finishRefresh: full ${seconds(r.fullFinishSeconds)}${steps(r.fullFinishSteps)}, no-change ${seconds(r.noChangeFinishSeconds)}${steps(r.noChangeFinishSteps)}`,
    '',
    `full / fetch-only (rate)   ${n2(r.fullToFetchRatio).padStart(6)}   target >= 0.7    ${mark(r.fullToFetchRatio >= 0.7)}`,
    ...(r.ceiling
      ? [
          `ceiling / fetch-only       ${n2(r.ceiling.toFetchRatio).padStart(6)}   the most any full refresh that maps and stores these rows reaches here (${n2(r.ceiling.cpuBoundToFetchRatio)} with every core busy all the time)`,
          `full / ceiling (rate)      ${n2(r.fullToCeilingRatio ?? 0).padStart(6)}   target >= ${r.plots >= 1_000_000 ? '0.7' : '0.8'}    ${mark((r.fullToCeilingRatio ?? 0) >= (r.plots >= 1_000_000 ? 0.7 : 0.8))}`,
        ]
      : []),
    ...(r.keyedCeiling
      ? [
          `keyed / bare ceiling       ${n2(r.keyedCeiling.plotsPerSec / (r.ceiling?.plotsPerSec ?? r.keyedCeiling.plotsPerSec)).padStart(6)}   what the keys alone leave of the ceiling`,
          `full / keyed ceiling       ${n2(r.fullToKeyedCeilingRatio ?? 0).padStart(6)}`,
        ]
      : []),
    `full / COPY-only           ${n2(r.fullToCopyRatio).padStart(6)}   (ceiling set by fetch-only / COPY-only: ${n2(r.fetchOnlyToCopyRatio)})`,
    `no-change / fetch-only     ${n2(r.noChangeToFetchRatio).padStart(6)}   target <= 1.1    ${mark(r.noChangeToFetchRatio <= 1.1)}`,
    `no-change rows written     ${String(r.noChangeRowsWritten).padStart(6)}   must be 0        ${rowsOk ? 'ok' : `NOT 0 (tables touched: ${r.noChangeTablesTouched.join(', ') || 'none'})`}`,
    `warehouse after full       ${r.fullWarehouse}`,
    `worker peak RSS (VmHWM)    ${n0(r.peakRssMb).padStart(6)} MB target <= 256 MB at 1M plots${r.peakRssCoversStartup ? ' (includes start-up: peak could not be reset)' : ''}`,
    `  worker: node ${r.workerNodeFlags.join(' ')} ${BUILT_CLI} worker --bundle ${BUILT_WORKFLOW_BUNDLE}`,
    `  sampled VmRSS: full ${n0(r.fullSampledRssMb)} MB, no-change ${n0(r.noChangeSampledRssMb)} MB; at start-up ${n0(r.workerStartupPeakRssMb)} MB`,
    `  by mapping at those peaks (MB): full ${mappings(r.fullRssByMapping)}; no-change ${mappings(r.noChangeRssByMapping)}`,
    `  benchmark process during the COPY baseline: ${n0(r.benchCopyPhaseRssMb)} MB`,
    `CPU seconds: ${Object.entries(r.cpuSeconds)
      .map(
        ([phase, used]) =>
          `${phase} ${Object.entries(used)
            .map(([p, v]) => `${p} ${n2(v)}`)
            .join(' + ')}`,
      )
      .join('; ')}`,
  ];
  if (r.ceiling)
    lines.push(
      `  CPU seconds, ceiling: ${Object.entries(r.ceiling.cpu)
        .map(([p, v]) => `${p} ${n2(v)}`)
        .join(' + ')}`,
    );
  if (r.keyedCeiling)
    lines.push(
      `  CPU seconds, keyed ceiling: ${Object.entries(r.keyedCeiling.cpu)
        .map(([p, v]) => `${p} ${n2(v)}`)
        .join(' + ')}`,
    );
  if (r.fetchOnlyPlots !== r.fullPlotsSeen || r.fullPlotsSeen !== r.noChangePlotsSeen) {
    lines.push(
      `  note: plots read differ between fetch-only (${r.fetchOnlyPlots}), full (${r.fullPlotsSeen}) and no-change (${r.noChangePlotsSeen})`,
    );
  }
  if (r.postgis) lines.push('', ...formatPostgis(r.postgis));
  for (const [name, statements] of [
    ['full refresh', r.fullStatements],
    ['no-change refresh', r.noChangeStatements],
  ] as const) {
    if (!statements) continue;
    lines.push('', `${name}, costliest statements (pg_stat_statements: total ms, calls, rows):`);
    for (const st of statements)
      lines.push(
        `  ${n0(st.totalMs).padStart(7)} ms ${String(st.calls).padStart(6)} × ${n0(st.rows).padStart(8)} rows  ${st.query}`,
      );
  }
  lines.push(
    '',
    `phases (wall): ${Object.entries(r.phaseSeconds)
      .map(([name, s]) => `${name} ${n2(s)} s`)
      .join(', ')}`,
  );
  return lines.join('\n');
}

function formatPostgis(p: PostgisComparison): string[] {
  const cpu = (used: Record<string, number>) =>
    Object.entries(used)
      .map(([name, v]) => `${name} ${n2(v)}`)
      .join(' + ');
  const row = (name: string, x: PostgisRefresh) => [
    `${name.padEnd(9)} full ${n2(x.fullSeconds).padStart(7)} s (finishRefresh ${seconds(x.fullFinishSeconds)}, ${n0(x.fullRowsWritten)} rows)  no-change ${n2(x.noChangeSeconds).padStart(6)} s (${x.noChangeRowsWritten} rows written${x.noChangeTablesTouched.length > 0 ? `; touched ${x.noChangeTablesTouched.join(', ')}` : ''})`,
    `          CPU s full: ${cpu(x.cpuSeconds.full)}; no-change: ${cpu(x.cpuSeconds.noChange)}`,
  ];
  const s = p.postgis.spatial;
  const lines = [
    `PostGIS (${p.server}; two warehouses on one cluster, the plain one without PostGIS, refreshed first):`,
    ...row('plain', p.plain),
    ...row('PostGIS', p.postgis),
    `  overlap check ${s.overlapsSeconds === null ? 'not run' : `${n2(s.overlapsSeconds)} s`}${s.overlapsError ? ` (failed: ${s.overlapsError})` : ''}; ${n0(s.plotsWithGeom)} plots with geom`,
    ...s.functions.map(
      (f) =>
        `  ${f.name.padEnd(22)} ${n0(f.calls).padStart(9)} calls ${n0(f.totalMs).padStart(7)} ms (self ${n0(f.selfMs)} ms)`,
    ),
    `PostGIS / plain, full (time)        ${n2(p.postgisToPlainFullRatio).padStart(6)}   target <= 1.1    ${mark(p.postgisToPlainFullRatio <= 1.1)}`,
    `PostGIS / plain, full (CPU s, all)  ${n2(p.postgisToPlainFullCpuRatio).padStart(6)}`,
    `PostGIS / plain, no-change (time)   ${n2(p.postgisToPlainNoChangeRatio).padStart(6)}`,
  ];
  return lines;
}

/** The largest mappings first, a path shortened to its file name. */
function mappings(byMapping: Record<string, number>): string {
  return Object.entries(byMapping)
    .slice(0, 5)
    .map(([name, mb]) => `${name.split('/').pop()} ${mb.toFixed(1)}`)
    .join(', ');
}
