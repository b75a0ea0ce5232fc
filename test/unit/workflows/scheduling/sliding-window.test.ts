import { describe, it, expect } from 'vitest';
import { forEachInWindow, type WindowOptions } from '../../../../workflows/scheduling/sliding-window.ts';

/** Every promise reaction runs before an immediate: the window has reacted to what ended (not a timed wait). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs the window over items 0..n-1 whose runs end when the test says. Returns the items started at
 * the call (`waves[0]`) and after each ending of `ends` in turn, the most running at once, and what
 * forEachInWindow resolved with.
 */
async function drive(
  n: number,
  options: WindowOptions,
  ends: number[],
): Promise<{ waves: number[][]; most: number; next: number }> {
  const items = Array.from({ length: n }, (_, i) => i);
  const endings = new Map<number, () => void>();
  let started: number[] = [];
  let running = 0;
  let most = 0;
  const done = forEachInWindow(items, options, (item) => {
    started.push(item);
    most = Math.max(most, ++running);
    return new Promise<void>((resolve) =>
      endings.set(item, () => {
        running--;
        resolve();
      }),
    );
  });
  const waves = [started];
  for (const item of ends) {
    await settle();
    started = [];
    const end = endings.get(item);
    if (!end) throw new Error(`item ${item} was not started, so it cannot end`);
    end();
    await settle();
    waves.push(started);
  }
  return { waves, most, next: await done };
}

describe('forEachInWindow: a sliding window, not fixed groups', () => {
  it.each([
    {
      name: 'starts `limit` at once, then one as each ends',
      n: 5,
      options: { limit: 2 },
      ends: [0, 1, 2, 3, 4],
      waves: [[0, 1], [2], [3], [4], [], []],
      most: 2,
      next: 5,
    },
    {
      name: 'starts the next item in order whichever ends',
      n: 5,
      options: { limit: 3 },
      ends: [2, 0, 1, 3, 4],
      waves: [[0, 1, 2], [3], [4], [], [], []],
      most: 3,
      next: 5,
    },
    {
      name: 'starts everything when the window is wider than the list',
      n: 3,
      options: { limit: 10 },
      ends: [1, 0, 2],
      waves: [[0, 1, 2], [], [], []],
      most: 3,
      next: 3,
    },
    {
      name: 'begins at `from`',
      n: 5,
      options: { limit: 2, from: 3 },
      ends: [3, 4],
      waves: [[3, 4], [], []],
      most: 2,
      next: 5,
    },
    {
      name: 'has nothing to do past the end',
      n: 2,
      options: { limit: 2, from: 2 },
      ends: [],
      waves: [[]],
      most: 0,
      next: 2,
    },
    {
      name: 'treats a window below one as one',
      n: 2,
      options: { limit: 0 },
      ends: [0, 1],
      waves: [[0], [1], []],
      most: 1,
      next: 2,
    },
    {
      name: 'stops starting at a budget, awaits what runs, and says where it stopped',
      n: 6,
      options: { limit: 2, mayStart: (startedHere: number) => startedHere < 3 },
      ends: [0, 1, 2],
      waves: [[0, 1], [2], [], []],
      most: 2,
      next: 3,
    },
    {
      name: 'starts nothing when told no at once',
      n: 3,
      options: { limit: 2, from: 1, mayStart: () => false },
      ends: [],
      waves: [[]],
      most: 0,
      next: 1,
    },
  ])('$name', async ({ n, options, ends, waves, most, next }) => {
    expect(await drive(n, options, ends)).toEqual({ waves, most, next });
  });

  it('counts the starts of this call only, from `from`', async () => {
    const asked: number[] = [];
    const next = await forEachInWindow(
      [0, 1, 2, 3],
      {
        limit: 1,
        from: 1,
        mayStart: (n) => {
          asked.push(n);
          return true;
        },
      },
      async () => {},
    );
    expect({ asked, next }).toEqual({ asked: [0, 1, 2], next: 4 });
  });

  it('stays stopped once told no, even if a later answer would be yes (continue-as-new is not revoked)', async () => {
    const answers = [true, true, false, true, true];
    const { waves, next } = await drive(5, { limit: 2, mayStart: () => answers.shift() ?? true }, [0, 1]);
    expect({ waves, next }).toEqual({ waves: [[0, 1], [], []], next: 2 });
  });

  it('rejects with the first run that rejects', async () => {
    await expect(
      forEachInWindow([1, 2, 3], { limit: 2 }, async (i) => {
        if (i === 2) throw new Error('run 2 failed');
      }),
    ).rejects.toThrow('run 2 failed');
  });
});
