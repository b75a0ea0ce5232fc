import type { Warehouse } from '../warehouse/database.ts';
import { readServerIdentity, type ServerIdentity } from '../warehouse/health.ts';

/** What the health check needs of the upstream client: one authenticated read. */
export interface UpstreamProbe {
  listSuppliers(): Promise<unknown[]>;
}

export type WarehouseHealth = ServerIdentity;

export interface UpstreamHealth {
  suppliers: number;
}

/** Proves a worker can reach both ends: the warehouse and the upstream service (token included). */
export function createHealthActivities(deps: { db: Warehouse; api: UpstreamProbe }) {
  return {
    async checkWarehouse(): Promise<WarehouseHealth> {
      return readServerIdentity(deps.db);
    },
    async checkUpstream(): Promise<UpstreamHealth> {
      const suppliers = await deps.api.listSuppliers();
      return { suppliers: suppliers.length };
    },
  };
}
