import { randomUUID } from 'node:crypto';
import { UsageError } from '../usage.ts';
import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { managedName, parseDesiredWebhooks } from '../../schema/desired-webhooks.ts';
import { maintainWebhooks, maintainWebhooksWorkflowId } from '../../workflows/maintain-webhooks.ts';
import { connectUpstream } from '../upstream.ts';

/** `event` comes with send-example only. */
export async function run(
  sub: 'list' | 'send-example' | 'reconcile',
  event: string | undefined,
  values: { json?: boolean; name?: string },
): Promise<number> {
  if (sub === 'reconcile') {
    const config = loadConfig(['temporal', 'webhooks']);
    const desired = parseDesiredWebhooks(config.webhooks!.desired);
    const client = await connectClient(config.temporal!);
    try {
      const result = await client.workflow.execute(maintainWebhooks, {
        taskQueue: config.temporal!.taskQueue,
        workflowId: maintainWebhooksWorkflowId(randomUUID()),
        args: [{ desired }],
      });
      if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        for (const a of result.actions)
          process.stdout.write(
            `${a.kind.padEnd(9)} ${a.name}${a.changes ? ` (${a.changes.join(', ')})` : ''}${a.reason ? ` (${a.reason})` : ''}\n`,
          );
        process.stdout.write(
          `${result.actions.length === 0 ? 'nothing to change; ' : ''}${result.managed} managed, ${result.foreign} other webhook(s) left alone; ${result.newAttempts} new delivery attempt(s) recorded\n`,
        );
      }
      return 0;
    } finally {
      await client.connection.close();
    }
  }

  const config = loadConfig(['upstream', 'logging']);
  const api = await connectUpstream(
    config.upstream!,
    createLogger({ level: config.logging!.level, format: config.logging!.format }),
  );
  const hooks = await api.listWebhooks();
  if (sub === 'list') {
    const rows = [];
    for (const w of hooks)
      rows.push({ ...w, managedName: managedName(w.description), stats: await api.getWebhookStats(w.id) });
    if (values.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else {
      for (const r of rows) {
        process.stdout.write(
          `${r.id}  ${(r.managedName ? `ddsync:${r.managedName}` : '(not ddsync)').padEnd(24)} ${r.isActive ? 'active  ' : 'inactive'} ${r.url}  events ${r.events.join(',')}  ok ${r.stats.successfulMessages} failed ${r.stats.failedMessages}\n`,
        );
      }
      if (rows.length === 0) process.stdout.write('no webhooks at the service\n');
    }
    return 0;
  }
  const known = await api.listWebhookEventTypes();
  if (!known.includes(event!)) throw new UsageError(`unknown event "${event}": the service sends ${known.join(', ')}`);
  const targets = hooks.filter(
    (w) =>
      managedName(w.description) !== null && (values.name === undefined || managedName(w.description) === values.name),
  );
  if (targets.length === 0) {
    process.stderr.write(
      `ddsync webhooks: no webhook of ddsync${values.name ? ` named "${values.name}"` : ''} at the service (run ddsync webhooks reconcile)\n`,
    );
    return 1;
  }
  const sent = [];
  for (const w of targets)
    sent.push({
      name: managedName(w.description),
      webhookId: w.id,
      ...(await api.sendExampleWebhookEvent(w.id, event!)),
    });
  process.stdout.write(
    values.json
      ? `${JSON.stringify(sent)}\n`
      : sent.map((s) => `sent ${event} to ${s.name}: message ${s.messageId}\n`).join(''),
  );
  return 0;
}
