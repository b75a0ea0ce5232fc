import type { RunProgress } from '../warehouse/refresh/run-ledger.ts';

/**
 * One line of refresh progress: suppliers done / total, suppliers' plots loaded (of those expected
 * from the connections' plotsCount) and the own plots on top, rate and ETA. Pure, so it is tested without a terminal.
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
  const eta = expected > p.supplierPlotsSeen && supplierRate > 0 ? `ETA ${clock((expected - p.supplierPlotsSeen) / supplierRate)}` : `elapsed ${clock(elapsed)}`;
  return `${bar} ${Math.round(fraction * 100)}%  ${suppliers}  ${plots}  ${fmt(Math.round(rate))} plots/s  ${eta}`;
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/**
 * Writes progress lines: redrawn in place on a terminal, one line every `everyMs` otherwise (logs
 * and CI stay readable).
 */
export function progressPrinter(stream: NodeJS.WriteStream, everyMs = 5_000) {
  let lastPlain = 0;
  let drawn = false;
  return {
    update(line: string, nowMs = Date.now()) {
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else if (nowMs - lastPlain >= everyMs) {
        stream.write(`${line}\n`);
        lastPlain = nowMs;
      }
    },
    /** A line to keep (a problem worth reading), written at once above the progress. */
    note(line: string) {
      if (stream.isTTY && drawn) stream.write('\r\x1b[2K');
      stream.write(`${line}\n`);
      drawn = false;
    },
    done(line?: string) {
      if (stream.isTTY && drawn) stream.write(`\r\x1b[2K${line ?? ''}${line ? '\n' : ''}`);
      else if (line) stream.write(`${line}\n`);
    },
  };
}
