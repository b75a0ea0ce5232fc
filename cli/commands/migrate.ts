import { loadConfig } from '../../platform/config.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';

export async function run(o: { json?: boolean }): Promise<number> {
  const config = loadConfig(['database']);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-migrate', 'migration');
  try {
    const outcome = await migrateToLatest(db);
    if (o.json) process.stdout.write(`${JSON.stringify(outcome)}\n`);
    else if (outcome.applied.length === 0)
      process.stdout.write(`warehouse is up to date (${outcome.current ?? 'no migrations'})\n`);
    else process.stdout.write(`applied ${outcome.applied.join(', ')}; warehouse at ${outcome.current}\n`);
    return 0;
  } finally {
    await db.destroy();
  }
}
