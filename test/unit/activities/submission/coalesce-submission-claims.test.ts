import { describe, expect, it } from 'vitest';
import { coalesce } from '../../../../activities/submission/coalesce.ts';

/** A handler whose calls are released by hand, recording what each call was given. */
function gated() {
  const calls: string[][] = [];
  const release: Array<() => void> = [];
  const handle = async (items: string[]) => {
    calls.push(items);
    await new Promise<void>((resolve) => release.push(resolve));
    return new Map(items.filter((i) => !i.startsWith('x')).map((i) => [i, i.toUpperCase()]));
  };
  return { calls, release, handle };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesce (the claims of a chunk lanes)', () => {
  it('sends the first request at once and the ones asked for meanwhile together in the next call', async () => {
    const g = gated();
    const claim = coalesce(g.handle);
    const a = claim('a');
    await settled();
    expect(g.calls).toEqual([['a']]);
    const rest = [claim('b'), claim('c'), claim('xd')];
    await settled();
    expect(g.calls).toEqual([['a']]);
    g.release.shift()!();
    expect(await a).toBe('A');
    await settled();
    expect(g.calls).toEqual([['a'], ['b', 'c', 'xd']]);
    g.release.shift()!();
    // Not in the handler's answer (a claim refused): undefined.
    expect(await Promise.all(rest)).toEqual(['B', 'C', undefined]);
  });

  it('rejects every request of a call that failed, and goes on with the next ones', async () => {
    let fail = true;
    const claim = coalesce(async (items: string[]) => {
      await settled();
      if (fail) throw new Error('database gone');
      return new Map(items.map((i) => [i, i.length]));
    });
    const first = claim('one');
    const second = claim('three');
    await expect(first).rejects.toThrow('database gone');
    fail = false;
    await expect(second).resolves.toBe(5);
    await expect(claim('four')).resolves.toBe(4);
  });
});
