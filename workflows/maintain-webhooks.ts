import { proxyActivities } from '@temporalio/workflow';
import type { DesiredWebhook } from '../schema/desired-webhooks.ts';
import type { ReconcileResult, WebhookActivities } from '../activities/webhooks/activities.ts';

/**
 * The scheduled upkeep of webhooks: make the service's webhooks match the desired ones (the input,
 * from DDSYNC_WEBHOOKS when the schedule was applied), then pull every delivery attempt and a stats
 * snapshot into the warehouse.
 */
export interface MaintainWebhooksInput {
  desired: DesiredWebhook[];
}

const { reconcileWebhooks, pullWebhookDeliveries } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

export const maintainWebhooksWorkflowId = (nonce: string) => `webhooks/${nonce}`;

export async function maintainWebhooks(
  input: MaintainWebhooksInput,
): Promise<ReconcileResult & { webhooks: number; newAttempts: number }> {
  const reconciled = await reconcileWebhooks({ desired: input.desired });
  const pulled = await pullWebhookDeliveries();
  return { ...reconciled, ...pulled };
}
