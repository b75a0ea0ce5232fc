import { describe, it, expect } from 'vitest';
import {
  STATEMENT_BOUNDS,
  scaledBounds,
  serverBoundsSql,
  type StatementKind,
} from '../../../warehouse/statement-bounds.ts';
import { StatementWatch } from '../../../warehouse/statement-watch.ts';

const KINDS = Object.keys(STATEMENT_BOUNDS) as StatementKind[];

describe('statement bounds', () => {
  it("puts the client's bound after the server's, for every kind and scale, and a lock wait within the statement's", () => {
    for (const kind of KINDS)
      for (const scale of [0.001, 0.02, 1, 3, 100]) {
        const b = scaledBounds(kind, scale);
        expect(b.clientMs, `${kind} × ${scale}`).toBeGreaterThan(b.statementMs);
        expect(b.lockMs, `${kind} × ${scale}`).toBeLessThanOrEqual(b.statementMs);
        expect(b.statementMs).toBeGreaterThanOrEqual(1);
      }
    expect(scaledBounds('work', 1)).toBe(STATEMENT_BOUNDS.work);
    // A page's statements for two minutes on the server, ten seconds more on the client.
    expect(STATEMENT_BOUNDS.work).toEqual({ statementMs: 120_000, lockMs: 60_000, clientMs: 130_000 });
    // Longer work gets proportionally more room (5 %).
    expect(STATEMENT_BOUNDS.migration.clientMs - STATEMENT_BOUNDS.migration.statementMs).toBe(180_000);
  });

  it('sets both server-side bounds in whole milliseconds, keeping a stricter one the server gives', () => {
    const text = serverBoundsSql({ statementMs: 2400.4, lockMs: 1200 });
    expect(text).toContain("interval '2400 ms' then extract(epoch from now.statement_timeout) * 1000 else 2400 end");
    expect(text).toContain("interval '1200 ms' then extract(epoch from now.lock_timeout) * 1000 else 1200 end");
  });
});

describe('StatementWatch', () => {
  function watched(probe: () => Promise<void>) {
    let now = 0;
    const heard: string[] = [];
    const watch = new StatementWatch(probe, { silentAfterMs: 15_000, now: () => now, checkEveryMs: 3_600_000 });
    const stop = watch.listen({
      silent: (reason) => heard.push(`silent: ${reason}`),
      answering: () => heard.push('answering'),
    });
    return { watch, heard, stop, advance: (ms: number) => (now += ms) };
  }

  it('probes only while a statement has waited long, and says silent once and answering once', async () => {
    let answers = true;
    let probes = 0;
    const { watch, heard, stop, advance } = watched(async () => {
      probes++;
      if (!answers) throw new Error('timeout expired');
    });
    const started = watch.begin();
    advance(14_000);
    await watch.check();
    expect(probes).toBe(0);
    advance(2_000);
    answers = false;
    await watch.check();
    await watch.check();
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatch(
      /^silent: the server does not answer \(a probe on a new connection failed: timeout expired\)/,
    );
    // The statement ends (its bound cut it): while silent, the watch still probes, until it is answered.
    watch.end(started);
    await watch.check();
    expect(probes).toBe(3);
    answers = true;
    await watch.check();
    await watch.check();
    expect(heard).toEqual([heard[0], 'answering']);
    expect(probes).toBe(4);
    stop();
  });

  it('never probes a server whose statements all answer quickly', async () => {
    let probes = 0;
    const { watch, stop, advance } = watched(async () => {
      probes++;
    });
    for (let i = 0; i < 100; i++) {
      const s = watch.begin();
      advance(1_000);
      await watch.check();
      watch.end(s);
    }
    expect(probes).toBe(0);
    stop();
  });
});
