import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../../platform/byte-budget.ts';

/** Whether a promise has settled by the time queued callbacks have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('ByteBudget', () => {
  it('admits tasks while their bytes fit, and the next one when bytes are given back', async () => {
    const budget = new ByteBudget(10);
    const a = await budget.acquire(6);
    const b = await budget.acquire(4);
    expect(budget.inUse).toBe(10);
    const c = budget.acquire(1);
    expect(await settled(c)).toBe(false);
    a();
    expect(await settled(c)).toBe(true);
    expect(budget.inUse).toBe(5);
    b();
    (await c)();
    expect(budget.inUse).toBe(0);
  });

  it('runs a task larger than the whole budget alone, not never', async () => {
    const budget = new ByteBudget(10);
    const small = await budget.acquire(3);
    const huge = budget.acquire(50);
    expect(await settled(huge)).toBe(false);
    small();
    const giveBack = await huge;
    expect(budget.inUse).toBe(50);
    const after = budget.acquire(1);
    expect(await settled(after)).toBe(false);
    giveBack();
    expect(await settled(after)).toBe(true);
  });

  it('admits in arrival order: small tasks do not pass a large one waiting', async () => {
    const budget = new ByteBudget(10);
    const held = await budget.acquire(8);
    const order: string[] = [];
    const large = budget.acquire(9).then((give) => (order.push('large'), give));
    const small = budget.acquire(1).then((give) => (order.push('small'), give));
    expect(await settled(small)).toBe(false);
    held();
    (await large)();
    (await small)();
    expect(order).toEqual(['large', 'small']);
  });

  it('gives bytes back once, however often it is called', async () => {
    const budget = new ByteBudget(10);
    const give = await budget.acquire(4);
    const other = await budget.acquire(4);
    give();
    give();
    expect(budget.inUse).toBe(4);
    other();
    expect(budget.inUse).toBe(0);
  });

  it('ends a wait when its signal aborts, takes nothing, and lets those behind it in', async () => {
    const budget = new ByteBudget(10);
    const held = await budget.acquire(6);
    const controller = new AbortController();
    const big = budget.acquire(8, controller.signal);
    const small = budget.acquire(4);
    expect(await settled(small)).toBe(false);
    controller.abort(new Error('cancelled'));
    await expect(big).rejects.toThrow('cancelled');
    expect(await settled(small)).toBe(true);
    expect(budget.queued).toBe(0);
    held();
    (await small)();
    expect(budget.inUse).toBe(0);
    await expect(budget.acquire(1, controller.signal)).rejects.toThrow('cancelled');
  });

  it('counts bytes taken without waiting past the capacity, and admits no task until they are given back', async () => {
    const budget = new ByteBudget(10);
    const estimated = await budget.acquire(2);
    // The page came larger than its estimate: its bytes are in memory already, so they are counted.
    const beyond = budget.take(13);
    expect(budget.inUse).toBe(15);
    const next = budget.acquire(1);
    expect(await settled(next)).toBe(false);
    beyond();
    beyond();
    // Given back once: 2 of the estimate, and the 1 admitted at once.
    expect(budget.inUse).toBe(3);
    expect(await settled(next)).toBe(true);
    estimated();
    (await next)();
    expect(budget.inUse).toBe(0);
  });

  it('refuses a budget of no bytes', () => {
    expect(() => new ByteBudget(0)).toThrow(/positive capacity/);
  });
});
