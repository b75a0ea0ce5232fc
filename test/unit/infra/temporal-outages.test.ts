import { describe, it, expect } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { Writable } from 'node:stream';
import { isConnectivityNoise, TemporalOutage, temporalUnreachable } from '../../../infra/temporal-outages.ts';
import { createLogger } from '../../../platform/logger.ts';
import { waitUntil } from '../../support/wait.ts';
import { resultThroughOutages, TemporalLostError } from '../../../cli/follow-through-outages.ts';

const unavailable = () =>
  Object.assign(
    new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7233'),
    {
      code: 14,
    },
  );

describe('Temporal out of reach', () => {
  it('is told from a gRPC UNAVAILABLE, through wrappers, and from the native core lines that only repeat it', () => {
    expect(temporalUnreachable(new Error('Failed to query', { cause: unavailable() }))).toBe('connection refused');
    expect(temporalUnreachable(Object.assign(new Error('namespace not found'), { code: 5 }))).toBeUndefined();
    expect(temporalUnreachable(new Error('Workflow execution failed'))).toBeUndefined();
    const core = {
      err: 'Status { code: Unavailable, message: "tcp connect error", source: ConnectError(Os { code: 111, kind: ConnectionRefused, message: "Connection refused" }) }',
    };
    expect(isConnectivityNoise('gRPC call poll_activity_task_queue retried 7 times', core)).toBe('connection refused');
    expect(isConnectivityNoise('Error while completing workflow activation', core)).toBe('connection refused');
    expect(isConnectivityNoise('Activity failed', core)).toBeUndefined();
    expect(
      isConnectivityNoise('gRPC call poll_activity_task_queue retried 7 times', { err: 'PermissionDenied' }),
    ).toBeUndefined();
  });
});

/** A handle whose result() follows a script: errors to throw, then the value. */
function scriptedHandle(script: Array<Error | string>, describeAnswers: () => boolean) {
  let calls = 0;
  return {
    handle: {
      result: async () => {
        const step = script[Math.min(calls++, script.length - 1)]!;
        if (step instanceof Error) throw step;
        return step;
      },
      describe: async () => {
        if (!describeAnswers()) throw unavailable();
        return {};
      },
    } as unknown as WorkflowHandle,
    calls: () => calls,
  };
}

describe('resultThroughOutages', () => {
  it('says once that Temporal is lost, keeps asking, and returns the result when it answers', async () => {
    const notes: string[] = [];
    const { handle, calls } = scriptedHandle([unavailable(), unavailable(), 'done'], () => false);
    const result = await resultThroughOutages<string>(handle, {
      what: 'refresh r1',
      again: 'ddsync refresh --wait',
      note: (l) => notes.push(l),
    });
    expect(result).toBe('done');
    expect(calls()).toBe(3);
    expect(notes).toEqual([
      'lost Temporal (connection refused): the refresh r1 goes on in the workers; waiting for Temporal to answer (Ctrl-C stops following, not the work)',
      'Temporal answers again: the refresh r1 has ended',
    ]);
  });

  it("throws the workflow's own failure as it is", async () => {
    const failed = new Error('Workflow execution failed');
    const { handle } = scriptedHandle([failed], () => true);
    await expect(resultThroughOutages(handle, { what: 'batch b', again: 'x', note: () => undefined })).rejects.toBe(
      failed,
    );
  });

  it('gives up after its bound with the command that follows the work again', async () => {
    const { handle } = scriptedHandle([unavailable()], () => false);
    const failure = await resultThroughOutages(handle, {
      what: 'batch b1',
      again: 'ddsync submissions status b1',
      note: () => undefined,
      giveUpAfterMs: 300,
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TemporalLostError);
    expect((failure as Error).message).toMatch(/batch b1 goes on in the workers.*`ddsync submissions status b1`/);
  });
});

describe('TemporalOutage', () => {
  function memoryLog() {
    const lines: Array<{ level: number; msg: string }> = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, log: createLogger({ format: 'json', destination }) };
  }

  it('calls a server that accepts connections but still fails calls one outage, and says it is back once calls stop failing', async () => {
    // The probes answer when the test says: a frontend that is starting accepts connections before
    // its calls answer, so a probe that connects is followed by a poll that fails.
    const probes: Array<() => void> = [];
    const probe = () => new Promise<void>((resolve) => probes.push(resolve));
    const { lines, log } = memoryLog();
    const outage = new TemporalOutage(log, '127.0.0.1:7233', 1, 2_000, probe);
    outage.failed('no answer from the frontend');
    await waitUntil('the first probe', () => probes.length === 1, 5_000, 1);
    probes[0]!();
    // The scenario, not a wait for the code: a poll fails 20 ms after the port accepted a connection.
    await new Promise((resolve) => setTimeout(resolve, 20));
    outage.failed('no answer from the frontend');
    expect(outage.down).toBe(true);
    await waitUntil('the second probe', () => probes.length === 2, 5_000, 1);
    probes[1]!();
    await waitUntil('the outage over', () => !outage.down, 5_000, 10);
    expect(lines.map((l) => l.msg.split(':')[0])).toEqual([
      'Temporal is unavailable',
      expect.stringMatching(/^Temporal is (back|available)/),
    ]);
  });
});
