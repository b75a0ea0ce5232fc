import { Context } from '@temporalio/activity';
import type { UpstreamClient } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { Logger } from '../../platform/logger.ts';
import { describedAs, type DesiredWebhook } from '../../schema/desired-webhooks.ts';
import { recordAttempts, recordStats, recordWebhooks } from '../../warehouse/webhooks/ledger.ts';
import { planWebhooks, type WebhookAction } from './reconcile-plan.ts';

/** Keeping the desired webhooks registered, and their attempts and stats in the warehouse. */

export type WebhookApi = Pick<
  UpstreamClient,
  'listWebhooks' | 'createWebhook' | 'updateWebhook' | 'deleteWebhook' | 'listWebhookAttempts' | 'getWebhookStats'
>;

export interface WebhookDeps {
  db: Warehouse;
  api: WebhookApi;
  log: Logger;
}

export interface ReconcileResult {
  actions: Array<{ kind: WebhookAction['kind']; name: string; id: string | null; changes?: string[]; reason?: string }>;
  managed: number;
  foreign: number;
}

export function createWebhookActivities({ db, api, log }: WebhookDeps) {
  const signal = () => Context.current().cancellationSignal;
  return {
    /** Creates, patches, re-activates, recreates or deletes ddsync's webhooks; never touches the others. */
    async reconcileWebhooks(input: { desired: DesiredWebhook[] }): Promise<ReconcileResult> {
      const plan = planWebhooks(input.desired, await api.listWebhooks({ signal: signal() }));
      const done: ReconcileResult['actions'] = [];
      for (const action of plan) {
        if (action.kind === 'delete') {
          await api.deleteWebhook(action.id, { signal: signal() });
          done.push({ kind: action.kind, name: action.name, id: action.id, reason: action.reason });
          continue;
        }
        const body = {
          url: action.desired.url,
          description: describedAs(action.desired),
          isActive: action.desired.active,
        };
        if (action.kind === 'patch') {
          await api.updateWebhook(action.id, body, { signal: signal() });
          done.push({ kind: action.kind, name: action.name, id: action.id, changes: action.changes });
          continue;
        }
        // The contract's PATCH cannot change events: a webhook listening to other events is replaced.
        if (action.kind === 'recreate') await api.deleteWebhook(action.id, { signal: signal() });
        const created = await api.createWebhook({ ...body, events: action.desired.events }, { signal: signal() });
        done.push({
          kind: action.kind,
          name: action.name,
          id: created.id,
          ...(action.kind === 'recreate' ? { changes: action.changes } : {}),
        });
      }
      const now = await api.listWebhooks({ signal: signal() });
      await recordWebhooks(db, now);
      const managed = now.filter((w) => input.desired.some((d) => describedAs(d) === w.description)).length;
      if (done.length > 0) log.info({ actions: done.map((a) => `${a.kind} ${a.name}`) }, 'webhooks reconciled');
      return { actions: done, managed, foreign: now.length - managed };
    },

    /** Every attempt (once) and a stats snapshot of each webhook the service lists. */
    async pullWebhookDeliveries(): Promise<{ webhooks: number; newAttempts: number }> {
      const hooks = await api.listWebhooks({ signal: signal() });
      await recordWebhooks(db, hooks);
      let newAttempts = 0;
      for (const w of hooks) {
        newAttempts += await recordAttempts(db, w.id, await api.listWebhookAttempts(w.id, { signal: signal() }));
        await recordStats(db, w.id, await api.getWebhookStats(w.id, { signal: signal() }));
      }
      return { webhooks: hooks.length, newAttempts };
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
