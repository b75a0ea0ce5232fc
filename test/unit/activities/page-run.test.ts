import { describe, expect, it } from 'vitest';
import { type PageRunInput, type PlotPageResult, runPages } from '../../../activities/refresh/page-run.ts';

/** A supplier's list as pages of `sizes` plots (full at 500), loaded in a controllable order. */
function supplierPages(sizes: readonly number[], fail: ReadonlyMap<number, Error> = new Map()) {
  const started: number[] = [];
  let running = 0;
  let mostRunning = 0;
  const settled = new Set<number>();
  const loadPage = async (page: number): Promise<PlotPageResult> => {
    started.push(page);
    running++;
    mostRunning = Math.max(mostRunning, running);
    // Later pages answer first: collection must still go in page order.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.resolve();
    running--;
    settled.add(page);
    const error = fail.get(page);
    if (error) throw error;
    const received = sizes[page - 1] ?? 0;
    return { more: received === 500, received, written: received, signature: received ? `p${page}` : '' };
  };
  return { loadPage, started, settled, mostRunning: () => mostRunning };
}

const input = (over: Partial<PageRunInput> = {}): PageRunInput => ({
  runId: 'run',
  supplierId: 's',
  first: 1,
  expected: 0,
  window: 2,
  maxPages: 100,
  ...over,
});
const limits = { seconds: 30, now: () => 0, cancelled: () => false };

describe('a run of pages (one activity reading many pages)', () => {
  it('reads in order up to the first page that is not full, at most `window` pages at once within the expected ones', async () => {
    const source = supplierPages([500, 500, 500, 120]);
    const result = await runPages(input({ expected: 4 }), source.loadPage, limits);
    expect(result).toMatchObject({ pages: 4, received: 1620, written: 1620, next: 5, ended: true, signature: 'p4' });
    expect(source.started).toEqual([1, 2, 3, 4]);
    expect(source.mostRunning()).toBe(2);
  });

  it('past the expected pages reads one page at a time until one is not full', async () => {
    const source = supplierPages([500, 500, 500, 0]);
    const result = await runPages(input({ expected: 1 }), source.loadPage, limits);
    expect(result).toMatchObject({ pages: 4, next: 5, ended: true, signature: '' });
    expect(source.mostRunning()).toBe(1);
  });

  it('stops after maxPages, not ended, with the page to read next', async () => {
    const source = supplierPages([500, 500, 500, 500, 10]);
    const result = await runPages(input({ first: 2, expected: 5, maxPages: 2 }), source.loadPage, limits);
    expect(result).toMatchObject({ pages: 2, next: 4, ended: false, signature: 'p3' });
    expect(source.started).toEqual([2, 3]);
  });

  it('starts no page after its seconds, and collects what it started', async () => {
    let clock = 0;
    const source = supplierPages([500, 500, 500, 500, 10]);
    const slow = async (page: number) => {
      const r = await source.loadPage(page);
      clock += 20_000;
      return r;
    };
    const result = await runPages(input({ expected: 5, window: 1 }), slow, { ...limits, now: () => clock });
    // Page 1 ends at 20 s, page 2 is started (within 30 s) and ends at 40 s: no page 3.
    expect(result).toMatchObject({ pages: 2, next: 3, ended: false });
  });

  it('keeps the pages collected before a failing page and ends there; every started page is settled first', async () => {
    const source = supplierPages([500, 500, 500, 500, 10], new Map([[3, new Error('service away')]]));
    const result = await runPages(input({ expected: 5 }), source.loadPage, limits);
    expect(result).toMatchObject({ pages: 2, next: 3, ended: false, stoppedBy: 'service away', signature: 'p2' });
    expect([...source.settled].sort()).toEqual([...source.started].sort());
  });

  it('fails when its first page fails (the retry policy applies)', async () => {
    const source = supplierPages([500, 10], new Map([[1, new Error('service away')]]));
    await expect(runPages(input({ expected: 2 }), source.loadPage, limits)).rejects.toThrow('service away');
    expect([...source.settled].sort()).toEqual([...source.started].sort());
  });

  it('fails when cancelled, even after collecting pages', async () => {
    let cancelled = false;
    const source = supplierPages([500, 500, 10], new Map([[2, new Error('aborted')]]));
    const load = async (page: number) => {
      if (page === 2) cancelled = true;
      return source.loadPage(page);
    };
    await expect(runPages(input({ expected: 0 }), load, { ...limits, cancelled: () => cancelled })).rejects.toThrow(
      'aborted',
    );
  });

  it('stops at a page equal to the one before it: the service ignored `page`', async () => {
    const repeating = async (): Promise<PlotPageResult> => ({
      more: true,
      received: 500,
      written: 0,
      signature: 'same',
    });
    const result = await runPages(input({ expected: 0, lastSignature: 'other' }), repeating, limits);
    expect(result).toMatchObject({ pages: 1, repeated: 2, next: 2 });
    const fromBefore = await runPages(input({ first: 7, lastSignature: 'same' }), repeating, limits);
    expect(fromBefore).toMatchObject({ pages: 0, repeated: 7 });
  });

  it('counts a page read ahead past the end, and a failure there ends nothing more', async () => {
    const source = supplierPages([500, 20, 0], new Map([[3, new Error('gone')]]));
    const result = await runPages(input({ expected: 3 }), source.loadPage, limits);
    expect(result).toMatchObject({ pages: 2, next: 3, ended: true, stoppedBy: 'gone' });
  });
});
