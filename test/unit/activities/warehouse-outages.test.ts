import { describe, it, expect } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { Writable } from 'node:stream';
import { activityInterceptors } from '../../../activities/index.ts';
import { WAREHOUSE_FATAL } from '../../../activities/warehouse-outages.ts';
import { Outage } from '../../../platform/outage.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { Warehouse } from '../../../warehouse/database.ts';

/** A logger whose JSON lines a test reads back. */
function memoryLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger({ format: 'json', destination, level: 'info' }) };
}

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const pgError = (code: string, message = `error ${code}`) => Object.assign(new Error(message), { code });

function harness(
  options: {
    waitForWarehouse?: (signal: AbortSignal) => Promise<void>;
    refusesWork?: () => Promise<string | undefined>;
  } = {},
) {
  const { lines, log } = memoryLog();
  const fatal: Array<[string, string | undefined]> = [];
  const interceptors = activityInterceptors({
    db: {} as Warehouse,
    outage: new Outage({ name: 'the warehouse', log }),
    onFatal: (reason, runId) => fatal.push([reason, runId]),
    contendedBackoffMs: 5,
    waitForWarehouse: options.waitForWarehouse ?? (() => Promise.resolve()),
    // By default the warehouse does not answer the check: a lost connection opens an outage.
    refusesWork: options.refusesWork ?? (() => Promise.resolve('the connection was refused')),
  });
  const environment = new MockActivityEnvironment({}, { interceptors, logger: silent });
  return { lines, fatal, environment };
}

describe('a warehouse outage met by an activity', () => {
  it('is waited out inside the attempt: the activity runs again once the warehouse is back, and the outage is two log lines', async () => {
    let back!: () => void;
    let waited = 0;
    const { lines, environment } = harness({
      waitForWarehouse: () => {
        waited++;
        return new Promise<void>((resolve) => (back = resolve));
      },
    });
    let runs = 0;
    const result = environment.run(async () => {
      runs++;
      if (runs === 1) throw pgError('57P01', 'terminating connection due to administrator command');
      if (runs === 2) throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
      return 'written';
    });
    // Two failures, each waiting for the warehouse; the wait is resolved each time it is asked for.
    await expect.poll(() => waited).toBe(1);
    back();
    await expect.poll(() => waited).toBe(2);
    back();
    expect(await result).toBe('written');
    expect(runs).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual([
      'the warehouse is unavailable: the server is shutting down (administrator command, restart or failover); activities wait for it and run again',
      expect.stringMatching(
        /^the warehouse is available again after \d+\.\d s; 2 failed attempts will be or were retried$/,
      ),
    ]);
  });

  it('declares no outage when the warehouse answers after a lost connection: one passing line, a back-off, the attempt again', async () => {
    const { lines, environment } = harness({
      waitForWarehouse: () => Promise.reject(new Error('not to be called')),
      refusesWork: () => Promise.resolve(undefined),
    });
    let runs = 0;
    const result = await environment.run(async () => {
      runs++;
      if (runs <= 2)
        throw Object.assign(new Error('the warehouse did not answer a statement within 7 s'), {
          name: 'WarehouseSilentError',
        });
      return runs;
    });
    expect(result).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual([
      'the warehouse answers, but one of its connections failed: the warehouse did not answer a statement within 7 s; the activity runs again',
    ]);
  });

  it('backs off and runs again after a lost lock or statement timeout, without waiting for the warehouse', async () => {
    const { environment } = harness({ waitForWarehouse: () => Promise.reject(new Error('not to be called')) });
    let runs = 0;
    const result = await environment.run(async () => {
      runs++;
      if (runs <= 2) throw pgError(runs === 1 ? '55P03' : '57014');
      return runs;
    });
    expect(result).toBe(3);
  });

  it('ends the wait with the warehouse error when the activity is cancelled (its timeout or its workflow)', async () => {
    const { environment } = harness({
      waitForWarehouse: (signal) =>
        new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const lost = pgError('08006', 'connection failure');
    const result = environment.run(async () => {
      throw lost;
    });
    await new Promise((resolve) => setImmediate(resolve));
    environment.cancel();
    await expect(result).rejects.toBe(lost);
  });

  it('fails at once, non-retryable, with what to do, when no wait can mend it; the worker is told, with the run', async () => {
    const { environment, fatal } = harness();
    for (let i = 0; i < 2; i++) {
      const failure = await environment
        .run(
          async (_input: { runId: string }) => {
            throw pgError('42703', 'column "area_ha" of relation "plots" does not exist');
          },
          { runId: `run-${i}` },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: WAREHOUSE_FATAL, nonRetryable: true });
      expect((failure as Error).message).toMatch(/another tool changed the warehouse's schema.*area_ha/);
    }
    // With the run each activity worked for: the worker ends those runs, and only those.
    expect(fatal.map(([, runId]) => runId)).toEqual(['run-0', 'run-1']);
  });

  it('leaves other errors to the retry policy', async () => {
    const { environment } = harness({ waitForWarehouse: () => Promise.reject(new Error('not to be called')) });
    const bug = new TypeError('cannot read properties of undefined');
    let runs = 0;
    await expect(
      environment.run(async () => {
        runs++;
        throw bug;
      }),
    ).rejects.toBe(bug);
    expect(runs).toBe(1);
  });
});
