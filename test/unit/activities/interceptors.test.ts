import { describe, it, expect } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { getMaxListeners } from 'node:events';
import { ApplicationFailure } from '@temporalio/common';
import { activityInterceptors } from '../../../activities/index.ts';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../../../upstream/index.ts';
import { Outage } from '../../../platform/outage.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Warehouse } from '../../../warehouse/database.ts';

/**
 * The worker's activity interceptors, on plain functions no factory wrapped: what the worker
 * (infra/worker.ts) does to every activity. test/integration/worker.test.ts shows the worker does it.
 */
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const unusedWarehouse = {
  db: {} as Warehouse,
  outage: new Outage({ name: 'the warehouse', log: silent as unknown as Logger }),
  waitForWarehouse: () => Promise.reject(new Error('no warehouse in this test')),
};
const environment = (info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}) =>
  new MockActivityEnvironment(info, { interceptors: activityInterceptors(unusedWarehouse), logger: silent });
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => new Error('succeeded'),
    (error: unknown) => error,
  );

describe('the activity interceptors', () => {
  it('make a refusal of the service a non-retryable failure with its status and endpoint, local activities too', async () => {
    const refused = async () => {
      throw new ForbiddenError({ endpoint: 'GET /suppliers', status: 403 });
    };
    for (const isLocal of [false, true]) {
      const failure = await failureOf(environment({ isLocal }).run(refused));
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({
        type: 'ForbiddenError',
        nonRetryable: true,
        message: 'GET /suppliers: 403 forbidden',
        details: [{ status: 403, endpoint: 'GET /suppliers' }],
      });
    }
  });

  it('keep a Retry-After as the next retry delay, and leave other errors as they are', async () => {
    const limited = await failureOf(
      environment().run(async () => {
        throw new RateLimitedError({ endpoint: 'GET /suppliers', status: 429, retryAfterMs: 7_000 });
      }),
    );
    expect(limited).toMatchObject({ type: 'RateLimitedError', nextRetryDelay: 7_000 });
    expect((limited as ApplicationFailure).nonRetryable).toBeFalsy();

    const token = new UnauthorizedError({ endpoint: 'GET /suppliers', status: 401 });
    expect(
      await failureOf(
        environment().run(async () => {
          throw token;
        }),
      ),
    ).toBe(token);
    // A database error that says nothing of the warehouse's state (a value too long) follows the retry policy.
    const database = Object.assign(new Error('value too long for type character varying(10)'), { code: '22001' });
    expect(
      await failureOf(
        environment().run(async () => {
          throw database;
        }),
      ),
    ).toBe(database);
  });

  it("let an activity's requests all listen on its cancellation signal without Node warning of a leak", async () => {
    const limit = await environment().run(async () => getMaxListeners(Context.current().cancellationSignal));
    expect(limit).toBeGreaterThanOrEqual(1_000);
  });

  it('heartbeat an activity given a heartbeat timeout for as long as it runs, and not one without', async () => {
    const heartbeating = environment({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    // The activity ends once the interceptor has heartbeaten three times (at once, then every 100 ms).
    let third!: () => void;
    const thirdBeat = new Promise<void>((resolve) => (third = resolve));
    heartbeating.on('heartbeat', () => {
      if (++beats === 3) third();
    });
    expect(
      await heartbeating.run(async () => {
        await thirdBeat;
        return 'done';
      }),
    ).toBe('done');

    const without = environment();
    let none = 0;
    without.on('heartbeat', () => none++);
    expect(await without.run(async () => 'done')).toBe('done');
    expect(none).toBe(0);
  });
});
