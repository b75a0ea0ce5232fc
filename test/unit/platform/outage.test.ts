import { describe, it, expect } from 'vitest';
import { Writable } from 'node:stream';
import { Outage } from '../../../platform/outage.ts';
import { createLogger } from '../../../platform/logger.ts';

function memoryLog() {
  const lines: Array<{ level: number; msg: string; downForMs?: number; failures?: number }> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger({ format: 'json', destination }) };
}

describe('Outage', () => {
  it('says one line when a dependency goes away and one when it is back, however many failures between', () => {
    const { lines, log } = memoryLog();
    let now = 1_000;
    const outage = new Outage({ name: 'the warehouse', log, now: () => now });
    outage.recovered();
    expect(lines).toHaveLength(0);
    for (let i = 0; i < 500; i++) {
      outage.failed('the server is shutting down');
      now += 20;
    }
    expect(outage.down).toBe(true);
    outage.recovered();
    outage.recovered();
    expect(lines.map((l) => l.level)).toEqual([40, 30]);
    expect(lines[0]!.msg).toBe('the warehouse is unavailable: the server is shutting down; work waits and is retried');
    expect(lines[1]).toMatchObject({ downForMs: 10_000, failures: 500 });
    expect(outage.down).toBe(false);
  });

  it('is not ended by the answer to a request sent before it began', () => {
    const { lines, log } = memoryLog();
    let now = 1_000;
    const outage = new Outage({ name: 'the warehouse', log, now: () => now });
    const before = outage.mark();
    now += 5;
    outage.failed('the server is shutting down');
    now += 5;
    // A statement that completed as the server went down: the outage goes on, and says nothing.
    outage.recovered(before);
    expect(outage.down).toBe(true);
    outage.failed('the server is shutting down');
    const after = outage.mark();
    now += 5;
    outage.recovered(after);
    expect(outage.down).toBe(false);
    expect(lines.map((l) => l.msg)).toEqual([
      'the warehouse is unavailable: the server is shutting down; work waits and is retried',
      'the warehouse is available again after 0.0 s; 2 failed attempts will be or were retried',
    ]);
  });

  it('reminds while the outage lasts, every remindEveryMs', () => {
    const { lines, log } = memoryLog();
    let now = 0;
    const outage = new Outage({ name: 'Temporal', log, now: () => now, remindEveryMs: 60_000 });
    for (let s = 0; s <= 180; s++) {
      now = s * 1000;
      outage.failed('connection refused');
    }
    expect(lines.map((l) => l.msg)).toEqual([
      'Temporal is unavailable: connection refused; work waits and is retried',
      'Temporal is still unavailable after 60 s: connection refused; work waits and is retried',
      'Temporal is still unavailable after 120 s: connection refused; work waits and is retried',
      'Temporal is still unavailable after 180 s: connection refused; work waits and is retried',
    ]);
  });
});
