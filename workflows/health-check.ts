import { proxyActivities } from '@temporalio/workflow';
import type * as health from '../activities/health.ts';

type HealthActivities = ReturnType<typeof health.createHealthActivities>;

const { checkWarehouse, checkUpstream } = proxyActivities<HealthActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export interface HealthReport {
  warehouse: health.WarehouseHealth;
  upstream: health.UpstreamHealth;
}

/** Runs both probes on a worker, proving the worker reaches Temporal, Postgres and the service. */
export async function healthCheck(): Promise<HealthReport> {
  const [warehouse, upstream] = await Promise.all([checkWarehouse(), checkUpstream()]);
  return { warehouse, upstream };
}

export const healthCheckWorkflowId = (nonce: string) => `health-check/${nonce}`;
