import { describe, it, expect } from 'vitest';
import { retryTakenPorts } from '../../../infra/ports.ts';

describe('a server (Temporal dev server, embedded Postgres) when a port ddsync chose is taken before it binds it', () => {
  const taken = new Error('listen tcp 127.0.0.1:46493: bind: address already in use');

  it('starts again with new ports, at most three times in all', async () => {
    const attempts: number[] = [];
    const started = await retryTakenPorts(true, async (attempt) => {
      attempts.push(attempt);
      if (attempt < 3) throw taken;
      return 'serving';
    });
    expect(started).toBe('serving');
    expect(attempts).toEqual([1, 2, 3]);
    let tries = 0;
    await expect(
      retryTakenPorts(true, async () => {
        tries++;
        throw taken;
      }),
    ).rejects.toThrow(/address already in use/);
    expect(tries).toBe(3);
  });

  it('does not retry ports the user gave, nor any other failure', async () => {
    let tries = 0;
    await expect(
      retryTakenPorts(false, async () => {
        tries++;
        throw taken;
      }),
    ).rejects.toThrow(/already in use/);
    expect(tries).toBe(1);
    tries = 0;
    await expect(
      retryTakenPorts(true, async () => {
        tries++;
        throw new Error('exited early with code 1: bad flag');
      }),
    ).rejects.toThrow(/bad flag/);
    expect(tries).toBe(1);
  });
});
