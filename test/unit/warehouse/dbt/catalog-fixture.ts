import type { CatalogColumn, CatalogRelation, WarehouseCatalog } from '../../../../warehouse/dbt/catalog.ts';
import { openVocabularyValues } from '../../../../warehouse/dbt/stated-facts.ts';

/** A column as the catalog reader gives it: text, nullable, commented, no origin, unless told. */
export const column = (name: string, more: Partial<CatalogColumn> = {}): CatalogColumn => ({
  name,
  dataType: 'text',
  comment: `The ${name}.`,
  notNull: false,
  needsQuoting: false,
  origin: null,
  ...more,
});

const relation = (name: string, kind: 'table' | 'view', more: Partial<CatalogRelation>): CatalogRelation => ({
  name,
  kind,
  comment: `One row per ${name}.`,
  columns: [],
  primaryKey: null,
  uniques: [],
  foreignKeys: [],
  checks: [],
  reads: [],
  ...more,
});

/**
 * A small warehouse as readWarehouseCatalog would read it: a key of each kind (single, composite,
 * partial unique index), a foreign key, a CHECK, a stated reference, views passing columns through,
 * a view over a view, a table the refresh does not write, and a relation whose name needs quotes.
 */
export function fixtureCatalog(): WarehouseCatalog {
  return {
    schema: 'public',
    migrations: ['0001_warehouse', '0002_bi_views'],
    // As normalise_status() would give them: lower case, spaces as underscores.
    normalised: Object.fromEntries(
      openVocabularyValues().map((v) => [
        v,
        v
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_'),
      ]),
    ),
    relations: [
      relation('analyses', 'table', {
        columns: [column('id', { notNull: true }), column('plot_id', { notNull: true })],
        primaryKey: { name: 'analyses_pkey', columns: ['id'] },
      }),
      relation('bi_current_plots', 'view', {
        columns: [
          column('plot_id', { origin: { relation: 'plots', column: 'id' } }),
          column('risk_level'),
          column('most_recent_analysis_id', { origin: { relation: 'plots', column: 'most_recent_analysis_id' } }),
        ],
        reads: ['analyses', 'plots'],
      }),
      relation('bi_sync_health', 'view', {
        columns: [
          column('run_id', { dataType: 'uuid' }),
          column('status', { origin: { relation: 'sync_runs', column: 'status' } }),
        ],
        reads: ['sync_runs'],
      }),
      relation('bi_transaction_pipeline', 'view', {
        columns: [
          column('batch_id', { dataType: 'uuid', origin: { relation: 'transactions', column: 'batch_id' } }),
          column('state', { origin: { relation: 'transactions', column: 'state' } }),
          column('status'),
          column('status_raw', { origin: { relation: 'transactions', column: 'status' } }),
        ],
        reads: ['transactions'],
      }),
      relation('bi_warehouse_totals', 'view', {
        columns: [column('plots', { dataType: 'bigint' })],
        reads: ['bi_current_plots'],
      }),
      relation('plot_history', 'table', {
        columns: [
          column('plot_id', { notNull: true }),
          column('valid_from', { notNull: true, dataType: 'timestamp with time zone' }),
          column('is_current', { notNull: true, dataType: 'boolean' }),
        ],
        primaryKey: { name: 'plot_history_pkey', columns: ['plot_id', 'valid_from'] },
        uniques: [{ columns: ['plot_id'], predicate: 'is_current', name: 'plot_history_current' }],
      }),
      relation('plot_species', 'table', {
        columns: [
          column('plot_id', { notNull: true }),
          column('position', { notNull: true, needsQuoting: true, dataType: 'smallint' }),
        ],
        primaryKey: { name: 'plot_species_pkey', columns: ['plot_id', 'position'] },
      }),
      relation('plots', 'table', {
        columns: [
          column('id', { notNull: true }),
          column('name'),
          column('risk_level'),
          column('most_recent_analysis_id'),
        ],
        primaryKey: { name: 'plots_pkey', columns: ['id'] },
      }),
      relation('submission_batches', 'table', {
        columns: [column('id', { notNull: true, dataType: 'uuid' }), column('status', { notNull: true })],
        primaryKey: { name: 'submission_batches_pkey', columns: ['id'] },
        checks: [
          {
            name: 'submission_batches_status_check',
            columns: ['status'],
            definition: "CHECK ((status = ANY (ARRAY['open'::text, 'done'::text, 'cancelled'::text])))",
          },
        ],
      }),
      relation('sync_runs', 'table', {
        columns: [
          column('id', { notNull: true, dataType: 'uuid' }),
          column('kind', { notNull: true }),
          column('status', { notNull: true }),
          column('finished_at', { dataType: 'timestamp with time zone' }),
        ],
        primaryKey: { name: 'sync_runs_pkey', columns: ['id'] },
        checks: [
          {
            name: 'sync_runs_status_check',
            columns: ['status'],
            definition:
              "CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'partial'::text, 'failed'::text])))",
          },
        ],
      }),
      relation('transaction_status_events', 'table', {
        columns: [column('transaction_key', { notNull: true }), column('source', { notNull: true })],
      }),
      relation('transactions', 'table', {
        columns: [
          column('key', { notNull: true }),
          column('batch_id', { notNull: true, dataType: 'uuid' }),
          column('state', { notNull: true }),
          column('status'),
        ],
        primaryKey: { name: 'transactions_pkey', columns: ['key'] },
        foreignKeys: [
          {
            name: 'transactions_batch_id_fkey',
            columns: ['batch_id'],
            references: { relation: 'submission_batches', columns: ['id'] },
          },
        ],
      }),
      relation('Weird Name', 'table', { columns: [column('x')] }),
    ],
  };
}
