import cliProgress from 'cli-progress';
import type { RunProgress } from '../warehouse/refresh/run-ledger.ts';

/** Where something stands: how far along (0 to 1, drawn as a bar) and the words after the bar. */
export interface Progress {
  fraction: number;
  text: string;
}

/**
 * A refresh's progress: the share done, the ETA (or the time taken), suppliers done / total,
 * suppliers' plots loaded (of those expected from the connections' plotsCount) and the own plots on
 * top, and the rate. The ETA comes early: a narrow terminal cuts the end of the line. The rate and
 * ETA count from the run's start in the warehouse, not from when this process began to follow it:
 * `ddsync refresh` may join a refresh the schedule started. Pure, so it is tested without a terminal.
 */
export function refreshProgress(p: RunProgress, nowMs: number): Progress {
  const elapsed = Math.max(0.001, (nowMs - p.startedAt.getTime()) / 1000);
  const rate = p.plotsSeen / elapsed;
  const supplierRate = p.supplierPlotsSeen / elapsed;
  const expected = p.plotsExpected ?? 0;
  const fraction =
    expected > 0
      ? Math.min(1, p.supplierPlotsSeen / expected)
      : p.suppliersTotal
        ? (p.suppliersDone + p.suppliersFailed) / p.suppliersTotal
        : 0;
  const suppliers =
    p.suppliersTotal === null
      ? 'suppliers …'
      : `suppliers ${p.suppliersDone}/${p.suppliersTotal}${p.suppliersFailed ? ` (${p.suppliersFailed} failed)` : ''}`;
  // The connections' plotsCount announces the suppliers' plots; the business's own come on top.
  const own = p.plotsSeen - p.supplierPlotsSeen;
  const plots = `plots ${fmt(p.supplierPlotsSeen)}${expected > 0 ? `/${fmt(expected)}` : ''}${own > 0 ? ` (+${fmt(own)} own)` : ''}`;
  const eta =
    expected > p.supplierPlotsSeen && supplierRate > 0
      ? `ETA ${duration((expected - p.supplierPlotsSeen) / supplierRate)}`
      : `elapsed ${duration(elapsed)}`;
  return {
    fraction,
    text: `${Math.round(fraction * 100)}%  ${eta}  ${suppliers}  ${plots}  ${fmt(Math.round(rate))} plots/s`,
  };
}

/** The line written where there is no terminal: `[######..........] text`. */
export function progressLine({ fraction, text }: Progress, width = BAR_WIDTH): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}`;
}

const BAR_WIDTH = 24;

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
  // The bar gives way, for good (a line that keeps changing shape is hard to read), once the words
  // need the room of a narrow terminal; what still does not fit is cut.
  let withBar = true;
  const bars = new cliProgress.MultiBar({
    stream,
    fps: 4,
    barsize: BAR_WIDTH,
    barCompleteChar: '#',
    barIncompleteChar: '.',
    format: (options, params, payload: { text: string }) => {
      withBar &&= BAR_WIDTH + 3 + payload.text.length < (stream.columns || 80);
      return withBar ? `[${cliProgress.Format.BarFormat(params.progress, options)}] ${payload.text}` : payload.text;
    },
    // Redrawn on every tick: a note written above the line would otherwise leave it blank until it changes.
    forceRedraw: true,
    // Cut to the terminal's width rather than switching the terminal's wrapping off (and the cursor
    // stays visible): nothing to restore if the process is killed, and no signal handler of its own.
    linewrap: true,
    hideCursor: false,
    gracefulExit: false,
  });
  let bar: cliProgress.SingleBar | undefined;
  const update = ({ fraction, text }: Progress) => {
    if (bar) bar.update(fraction, { text });
    else bar = bars.create(1, fraction, { text });
  };
  return {
    update,
    /** A line to keep (a problem worth reading), written above the progress. */
    note(line: string) {
      if (bar) bars.log(`${line}\n`);
      else stream.write(`${line}\n`);
    },
    done(last?: Progress) {
      if (last) update(last);
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
    update(progress: Progress, nowMs = Date.now()) {
      if (nowMs - last < everyMs) return;
      stream.write(`${progressLine(progress)}\n`);
      last = nowMs;
    },
    note(line: string) {
      stream.write(`${line}\n`);
    },
    done(progress?: Progress) {
      if (progress) stream.write(`${progressLine(progress)}\n`);
    },
  };
}
