import { ConfigError, loadConfig } from '../platform/config.ts';
import { checkWarehouse } from '../infra/warehouse-connection.ts';
import { openWarehouse } from '../warehouse/database.ts';
import { describeSpatialMode, readSpatialMode } from '../warehouse/spatial/mode.ts';

/**
 * The warehouse's spatial mode in one line for `ddsync config` (docs/postgis.md), or why it could not
 * be read: undefined when DATABASE_URL is unset or malformed (the configuration report says so).
 * Never throws: an unreachable warehouse is a line of the report, not a failed command.
 */
export async function warehouseModeLine(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  let url: string;
  try {
    const database = loadConfig(['database'], env).database;
    if (!database) return undefined;
    url = database.url;
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
  try {
    await checkWarehouse(url, 'ddsync-config');
  } catch (error) {
    return `not read: ${error instanceof Error ? error.message : String(error)}`;
  }
  const db = openWarehouse(url, 1, 'ddsync-config');
  try {
    return describeSpatialMode(await readSpatialMode(db));
  } catch (error) {
    return `not read: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await db.destroy();
  }
}
