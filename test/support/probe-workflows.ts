import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { createHealthActivities } from '../../activities/health.ts';

/**
 * Test workflows: one activity of the worker, called as an ordinary and as a local activity, and
 * the failure it ended with as the workflow sees it (the health probes, which no factory wraps).
 */
type HealthActivities = ReturnType<typeof createHealthActivities>;

const options = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '50 milliseconds' },
} as const;
const remote = proxyActivities<HealthActivities>(options);
const local = proxyLocalActivities<HealthActivities>(options);

export interface ProbeFailure {
  type: string | undefined | null;
  nonRetryable: boolean | undefined | null;
  message: string;
  details: unknown[] | undefined | null;
}

export async function probeUpstream(how: 'remote' | 'local'): Promise<ProbeFailure | null> {
  try {
    await (how === 'local' ? local : remote).checkUpstream();
    return null;
  } catch (error) {
    // A local activity's failure arrives unwrapped, an ordinary activity's inside an ActivityFailure.
    const failure = error instanceof ActivityFailure ? error.cause : error;
    if (!(failure instanceof ApplicationFailure)) throw error;
    const { type, nonRetryable, message, details } = failure;
    return { type, nonRetryable, message, details };
  }
}
