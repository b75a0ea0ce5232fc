import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { startReceiver } from '../../infra/receiver.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { createUpstreamFromConfig } from '../upstream.ts';

export async function run(): Promise<number> {
  const config = loadConfig(['upstream', 'database', 'temporal', 'webhooks', 'logging']);
  const log = createLogger({ level: config.logging!.level, format: config.logging!.format });
  const db = await connectWarehouse(config.database!.url, 4, 'ddsync-receiver');
  await migrateToLatest(db);
  const temporal = await connectClient(config.temporal!);
  const api = createUpstreamFromConfig(config.upstream!, log);
  const { host, port, maxBodyBytes } = config.webhooks!.receiver;
  const receiver = await startReceiver({ db, api, temporal, log, host, port, maxBodyBytes });
  process.stdout.write(
    `webhook receiver listening on ${receiver.url} (deliveries to ${receiver.url}/hooks/<webhook name>)\n`,
  );
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
