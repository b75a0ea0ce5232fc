import { sql } from 'kysely';
import type { Warehouse } from '../warehouse/database.ts';

/** What the health check needs of the upstream client: one authenticated read. */
export interface UpstreamProbe {
  listSuppliers(): Promise<unknown[]>;
}

export interface WarehouseHealth {
  serverVersion: string;
  database: string;
}

export interface UpstreamHealth {
  suppliers: number;
}

/** Proves a worker can reach both ends: the warehouse and the upstream service (token included). */
export function createHealthActivities(deps: { db: Warehouse; api: UpstreamProbe }) {
  return {
    async checkWarehouse(): Promise<WarehouseHealth> {
      const { rows } = await sql<{
        version: string;
        db: string;
      }>`select current_setting('server_version') as version, current_database() as db`.execute(deps.db);
      const row = rows[0]!;
      return { serverVersion: row.version, database: row.db };
    },
    async checkUpstream(): Promise<UpstreamHealth> {
      const suppliers = await deps.api.listSuppliers();
      return { suppliers: suppliers.length };
    },
  };
}
