import { sql } from 'kysely';
import type { Row, Warehouse } from '../database.ts';
import type { ExportPlot } from '../../domain/eudr/eu-geojson.ts';

/**
 * The plots a statement would carry, as the warehouse has them: those of a direct supplier (its own
 * and its upstream businesses', as GET /businesses/{id}/plots lists them and plot_suppliers keeps
 * them), with their readiness. The producer is the plot's owner (its name when the warehouse knows
 * the business, else its id).
 */
export interface StatementPlot extends ExportPlot {
  supplierId: string;
  ownerId: string | null;
  ready: boolean;
  blockingCodes: string[];
}

export async function plotsOfSuppliers(db: Warehouse, supplierIds: readonly string[]): Promise<StatementPlot[]> {
  if (supplierIds.length === 0) return [];
  const { rows } = await sql<
    Pick<Row<'plot_suppliers'>, 'supplier_id'> &
      Pick<Row<'plots'>, 'id' | 'name' | 'country_code' | 'owner_id'> & {
        producer_name: string | null;
        geometry: unknown;
        area_ha: number | null;
        ready: boolean | null;
        blocking_codes: string[] | null;
      }
  >`
    select ps.supplier_id, p.id, p.name, p.country_code, p.owner_id, coalesce(b.name, p.owner_id) as producer_name,
           p.geometry, coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as area_ha, r.ready, r.blocking_codes
    from plot_suppliers ps
    join plots p on p.id = ps.plot_id and p.deleted_at is null
    left join businesses b on b.id = p.owner_id
    left join bi_eudr_plot_readiness r on r.plot_id = p.id
    where ps.supplier_id = any(${[...supplierIds]}::text[]) and ps.deleted_at is null
    order by ps.supplier_id, p.id`.execute(db);
  return rows.map((r) => ({
    supplierId: r.supplier_id,
    id: r.id,
    name: r.name,
    countryCode: r.country_code,
    ownerId: r.owner_id,
    producerName: r.producer_name,
    geometry: r.geometry,
    areaHa: r.area_ha === null ? null : Number(r.area_ha),
    // A plot the readiness view does not have is not known to be ready.
    ready: r.ready === true,
    blockingCodes: r.blocking_codes ?? [],
  }));
}

/** When the last successful refresh finished; null when none has. */
export async function lastRefreshFinishedAt(db: Warehouse): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`
    select max(finished_at) as at from sync_runs where kind = 'refresh' and status = 'succeeded'`.execute(db);
  return rows[0]?.at ?? null;
}

/**
 * The internal-supplier components of a row taken in by `ddsync submit` (its create body as recorded):
 * each brings its suppliers' plots, or, when it names plotIds, those. Null when no such row was accepted.
 */
export async function acceptedRowComponents(
  db: Warehouse,
  batchId: string,
  key: string,
): Promise<Array<{ supplierIds: string[]; plotIds: string[] | null }> | null> {
  const { rows } = await sql<{ payload: { components?: Array<Record<string, unknown>> } | null }>`
    select payload from transaction_requests where batch_id = ${batchId}::uuid and key = ${key} and status = 'accepted'`.execute(
    db,
  );
  const payload = rows[0]?.payload;
  if (!payload) return null;
  return (payload.components ?? []).flatMap((c) => {
    const supplierIds = [
      ...(typeof c['supplierBusinessId'] === 'string' ? [c['supplierBusinessId']] : []),
      ...(Array.isArray(c['supplierBusinessIds']) ? (c['supplierBusinessIds'] as string[]) : []),
    ];
    if (supplierIds.length === 0) return [];
    return [{ supplierIds, plotIds: Array.isArray(c['plotIds']) ? (c['plotIds'] as string[]) : null }];
  });
}
