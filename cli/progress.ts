import cliProgress from 'cli-progress';
import type { RunProgress } from '../warehouse/refresh/run-ledger.ts';

/**
 * One line of refresh progress: suppliers done / total, suppliers' plots loaded (of those expected
 * from the connections' plotsCount) and the own plots on top, rate and ETA. Pure, so it is tested
 * without a terminal. The rate and ETA count from the run's start in the warehouse, not from when
 * this process began to follow it: `ddsync refresh` may join a refresh the schedule started.
 */
export function progressLine(p: RunProgress, nowMs: number, width = 28): string {
  const elapsed = Math.max(0.001, (nowMs - p.startedAt.getTime()) / 1000);
  const rate = p.plotsSeen / elapsed;
  const supplierRate = p.supplierPlotsSeen / elapsed;
  const expected = p.plotsExpected ?? 0;
  const fraction = expected > 0 ? Math.min(1, p.supplierPlotsSeen / expected) : p.suppliersTotal ? (p.suppliersDone + p.suppliersFailed) / p.suppliersTotal : 0;
  const filled = Math.round(fraction * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const suppliers = p.suppliersTotal === null ? 'suppliers …' : `suppliers ${p.suppliersDone}/${p.suppliersTotal}${p.suppliersFailed ? ` (${p.suppliersFailed} failed)` : ''}`;
  // The connections' plotsCount announces the suppliers' plots; the business's own come on top.
  const own = p.plotsSeen - p.supplierPlotsSeen;
  const plots = `plots ${fmt(p.supplierPlotsSeen)}${expected > 0 ? `/${fmt(expected)}` : ''}${own > 0 ? ` (+${fmt(own)} own)` : ''}`;
  const eta = expected > p.supplierPlotsSeen && supplierRate > 0 ? `ETA ${duration((expected - p.supplierPlotsSeen) / supplierRate)}` : `elapsed ${duration(elapsed)}`;
  return `${bar} ${Math.round(fraction * 100)}%  ${suppliers}  ${plots}  ${fmt(Math.round(rate))} plots/s  ${eta}`;
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Seconds as cli-progress writes its ETAs: 45s, 5m10s, 1h2m. */
export function duration(seconds: number): string {
  return cliProgress.Format.TimeFormat(Math.max(0, Math.round(seconds)), { autopaddingChar: '' }, 1);
}

/**
 * Writes progress lines. On a terminal, cli-progress keeps one live line: redrawn a few times a
 * second whatever the update rate, cut to the terminal's width (a wrapped line would be redrawn
 * as a new one), with notes written above it. Elsewhere (CI logs, a test capturing stderr), plain
 * lines: the first at once, then one every `everyMs`, and the last. cli-progress's own non-terminal
 * mode is not used: it cuts lines at 200 characters and writes blank lines between its redraws.
 */
export function progressPrinter(stream: NodeJS.WriteStream, everyMs = 5_000) {
  return stream.isTTY ? terminalPrinter(stream) : plainPrinter(stream, everyMs);
}

function terminalPrinter(stream: NodeJS.WriteStream) {
  const bars = new cliProgress.MultiBar({
    stream, fps: 4, format: (_options, _params, payload: { line: string }) => payload.line,
    // Redrawn on every tick: a note written above the line would otherwise leave it blank until it changes.
    forceRedraw: true,
    // Cut to the terminal's width rather than switching the terminal's wrapping off (and the cursor
    // stays visible): nothing to restore if the process is killed, and no signal handler of its own.
    linewrap: true, hideCursor: false, gracefulExit: false,
  });
  let bar: cliProgress.SingleBar | undefined;
  const update = (line: string) => {
    if (bar) bar.update({ line });
    else bar = bars.create(1, 0, { line });
  };
  return {
    update,
    /** A line to keep (a problem worth reading), written above the progress. */
    note(line: string) {
      if (bar) bars.log(`${line}\n`);
      else stream.write(`${line}\n`);
    },
    done(line?: string) {
      if (line !== undefined) update(line);
      if (!bar) return;
      // Writes the notes not written yet, then leaves the last line on the screen.
      bars.update();
      bars.stop();
    },
  };
}

function plainPrinter(stream: NodeJS.WriteStream, everyMs: number) {
  let last = -Infinity;
  return {
    update(line: string, nowMs = Date.now()) {
      if (nowMs - last < everyMs) return;
      stream.write(`${line}\n`);
      last = nowMs;
    },
    note(line: string) {
      stream.write(`${line}\n`);
    },
    done(line?: string) {
      if (line !== undefined) stream.write(`${line}\n`);
    },
  };
}
