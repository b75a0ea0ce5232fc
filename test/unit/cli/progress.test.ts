import { describe, it, expect } from 'vitest';
import { PassThrough } from 'node:stream';
import { duration, progressLine, progressPrinter, refreshProgress } from '../../../cli/progress.ts';
import type { RunProgress } from '../../../warehouse/refresh/run-ledger.ts';

const run = (p: Partial<RunProgress>): RunProgress => ({
  runId: 'r',
  status: 'running',
  startedAt: new Date(0),
  finishedAt: null,
  suppliersTotal: 10,
  suppliersDone: 4,
  suppliersFailed: 1,
  plotsExpected: 10_000,
  plotsSeen: 2_500,
  supplierPlotsSeen: 2_500,
  pages: 5,
  error: null,
  ...p,
});

/** A stream that collects what is written; a terminal when `tty` (cli-progress reads isTTY and columns). */
function capture(tty: boolean, columns = 80) {
  const stream = Object.assign(new PassThrough(), { isTTY: tty, columns }) as unknown as NodeJS.WriteStream;
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

describe('refresh progress', () => {
  it('shows the share done, ETA, suppliers, plots against the expected count and rate', () => {
    expect(progressLine(refreshProgress(run({}), 10_000), 10)).toBe(
      '[###.......] 25%  ETA 30s  suppliers 4/10 (1 failed)  plots 2,500/10,000  250 plots/s',
    );
    // The caller's own plots come on top of what the connections announced.
    const past = refreshProgress(
      run({ suppliersDone: 10, suppliersFailed: 0, plotsSeen: 10_200, supplierPlotsSeen: 10_000, pages: 21 }),
      10_000,
    );
    expect(past).toEqual({
      fraction: 1,
      text: '100%  elapsed 10s  suppliers 10/10  plots 10,000/10,000 (+200 own)  1,020 plots/s',
    });
  });

  it('writes durations as cli-progress writes its ETAs', () => {
    expect([duration(0), duration(45.4), duration(310), duration(3725)]).toEqual(['0s', '45s', '5m10s', '1h2m']);
  });
});

describe('progress printer', () => {
  it('writes plain lines when not on a terminal: the first at once, then at most one per interval, notes at once, the last', () => {
    const out = capture(false);
    const printer = progressPrinter(out.stream, 5_000);
    const at = (fraction: number, text: string) => ({ fraction, text });
    printer.update(at(0, 'a'), 1_000);
    printer.update(at(0.25, 'b'), 3_000);
    printer.note('retrying: 503');
    printer.update(at(0.5, 'c'), 6_000);
    printer.update(at(0.75, 'd'), 7_000);
    printer.done(at(1, 'e'));
    const bar = (filled: number) => `[${'#'.repeat(filled)}${'.'.repeat(24 - filled)}]`;
    expect(out.text()).toBe(`${bar(0)} a\nretrying: 503\n${bar(12)} c\n${bar(24)} e\n`);
  });

  it('keeps one live line on a terminal, its bar giving way to the words when narrow, notes above it, the last line left on the screen', () => {
    const shown = (columns: number, text: string) => {
      const out = capture(true, columns);
      const printer = progressPrinter(out.stream);
      printer.update({ fraction: 0, text: 'first' });
      printer.note('a note');
      printer.done({ fraction: 0.5, text });
      // Without the cursor moves and clearing.
      return out.text().replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    };
    const wide = shown(80, 'half');
    expect(wide).toContain('a note\n');
    // Redrawn in place, never a line per update; the last line stays.
    expect(wide.split('\n').filter((line) => line.trim() !== '')).toHaveLength(2);
    expect(wide).toContain(`[${'#'.repeat(12)}${'.'.repeat(12)}] half`);
    expect(wide.endsWith('\n')).toBe(true);
    // 20 columns: no room for a bar, and the words cut at the edge.
    const narrow = shown(20, `ETA 30s ${'x'.repeat(30)}`);
    expect(narrow).toContain(`ETA 30s ${'x'.repeat(12)}`);
    expect(narrow).not.toContain('x'.repeat(13));
    expect(narrow).not.toContain('[');
  });
});
