import { describe, it, expect } from 'vitest';
import { PassThrough } from 'node:stream';
import { duration, progressLine, progressPrinter } from '../../../cli/progress.ts';
import type { RunProgress } from '../../../warehouse/refresh/run-ledger.ts';

const run = (p: Partial<RunProgress>): RunProgress => ({
  runId: 'r', status: 'running', startedAt: new Date(0), finishedAt: null, suppliersTotal: 10, suppliersDone: 4, suppliersFailed: 1,
  plotsExpected: 10_000, plotsSeen: 2_500, supplierPlotsSeen: 2_500, pages: 5, error: null, ...p,
});

/** A stream that collects what is written; a terminal when `tty` (cli-progress reads isTTY and columns). */
function capture(tty: boolean, columns = 80) {
  const stream = Object.assign(new PassThrough(), { isTTY: tty, columns }) as unknown as NodeJS.WriteStream;
  let text = '';
  stream.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
  return { stream, text: () => text };
}

describe('progress line', () => {
  it('shows suppliers, plots against the expected count, rate and ETA', () => {
    expect(progressLine(run({}), 10_000, 10)).toBe('[###.......] 25%  suppliers 4/10 (1 failed)  plots 2,500/10,000  250 plots/s  ETA 30s');
    // The caller's own plots come on top of what the connections announced.
    const past = progressLine(run({ suppliersDone: 10, suppliersFailed: 0, plotsSeen: 10_200, supplierPlotsSeen: 10_000, pages: 21 }), 10_000, 10);
    expect(past).toBe('[##########] 100%  suppliers 10/10  plots 10,000/10,000 (+200 own)  1,020 plots/s  elapsed 10s');
  });

  it('writes durations as cli-progress writes its ETAs', () => {
    expect([duration(0), duration(45.4), duration(310), duration(3725)]).toEqual(['0s', '45s', '5m10s', '1h2m']);
  });
});

describe('progress printer', () => {
  it('writes plain lines when not on a terminal: the first at once, then at most one per interval, notes at once, the last', () => {
    const out = capture(false);
    const printer = progressPrinter(out.stream, 5_000);
    printer.update('a', 1_000);
    printer.update('b', 3_000);
    printer.note('retrying: 503');
    printer.update('c', 6_000);
    printer.update('d', 7_000);
    printer.done('e');
    expect(out.text()).toBe('a\nretrying: 503\nc\ne\n');
  });

  it('keeps one live line on a terminal, cut to its width, notes above it, the last line left on the screen', () => {
    const out = capture(true, 20);
    const printer = progressPrinter(out.stream);
    printer.update('first');
    printer.note('a note');
    printer.done('x'.repeat(30));
    const text = out.text();
    // Redrawn in place (carriage return or cursor moves), never a line per update, never wider than the terminal.
    expect(text.split('\n').filter((line) => line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim() !== '')).toHaveLength(2);
    expect(text).toContain('a note\n');
    expect(text).toContain('x'.repeat(20));
    expect(text).not.toContain('x'.repeat(21));
    expect(text.endsWith('\n')).toBe(true);
  });
});
