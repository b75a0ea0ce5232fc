import { parseFlags } from '../usage.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logger.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { startReceiver } from '../../infra/receiver.ts';
import { openWarehouse } from '../../activities/warehouse/database.ts';
import { migrateToLatest } from '../../activities/warehouse/migrate.ts';
import { createUpstreamFromConfig } from '../upstream.ts';

export const summary = 'run the webhook receiver (verifies deliveries, stores each event once, wakes transactions)';
export const help = `ddsync receiver

Listens on DDSYNC_RECEIVER_HOST:DDSYNC_RECEIVER_PORT for the service's webhook deliveries at
POST /hooks/<name> (one path per webhook of DDSYNC_WEBHOOKS). Each delivery is checked (Svix
signature over the raw body, both header prefixes, several signatures during a secret rotation,
timestamp within 5 minutes, at most DDSYNC_RECEIVER_MAX_BODY bytes), stored once per message id in
webhook_events, answered at once, and a transaction.updated wakes its transaction's workflow.
The signing secrets are fetched from the service and kept in memory only. GET /healthz answers 200.
Runs until SIGINT/SIGTERM. Set DDSYNC_RECEIVER_IN_WORKER=true to run it inside \`ddsync worker\`.`;

export async function run(argv: string[]): Promise<number> {
  parseFlags(argv, {});
  const config = loadConfig(['upstream', 'database', 'temporal', 'webhooks', 'logging']);
  const log = createLogger({ level: config.logging!.level, format: config.logging!.format });
  const db = openWarehouse(config.database!.url, 4, 'ddsync-receiver');
  await migrateToLatest(db);
  const temporal = await connectClient(config.temporal!);
  const api = createUpstreamFromConfig(config.upstream!, log);
  const { host, port, maxBodyBytes } = config.webhooks!.receiver;
  const receiver = await startReceiver({ db, api, temporal, log, host, port, maxBodyBytes });
  process.stdout.write(`webhook receiver listening on ${receiver.url} (deliveries to ${receiver.url}/hooks/<webhook name>)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await receiver.close();
  await temporal.connection.close();
  await db.destroy();
  log.info('webhook receiver stopped');
  return 0;
}
