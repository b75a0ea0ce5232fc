create view bi_sync_health as
select
  r.id as run_id,
  r.kind,
  r.status,
  r.started_at,
  r.finished_at,
  extract(epoch from (coalesce(r.finished_at, now()) - r.started_at))::numeric(12, 1) as seconds,
  r.suppliers_total,
  r.suppliers_done,
  r.suppliers_failed,
  r.pages,
  r.plots_seen,
  r.requests,
  r.retries,
  r.rate_limited,
  coalesce(c.inserted, 0) as rows_inserted,
  coalesce(c.updated, 0) as rows_updated,
  coalesce(c.unchanged, 0) as rows_unchanged,
  coalesce(c.deleted, 0) as rows_deleted,
  (select count(*) from sync_issues i where i.run_id = r.id) as record_issues,
  r.error,
  extract(epoch from (now() - (select max(finished_at) from sync_runs s where s.status = 'succeeded')))::numeric(12, 0) as seconds_since_last_success,
  r.deletions_confirmed,
  r.deletions_deferred
from sync_runs r
left join (
  select run_id, sum(inserted) as inserted, sum(updated) as updated, sum(unchanged) as unchanged, sum(deleted) as deleted
  from sync_run_counts group by run_id
) c on c.run_id = r.id;

comment on view bi_sync_health is 'One row per refresh: outcome, duration, volume, requests, retries, 429s, rows written, record issues, deletions, and the age of the last successful refresh. Counts are per run and may be summed across runs; seconds_since_last_success is the same on every row.';
comment on column bi_sync_health.run_id is 'The refresh (sync_runs.id).';
comment on column bi_sync_health.kind is 'refresh.';
comment on column bi_sync_health.status is 'running, succeeded, partial (some suppliers failed; they were not swept) or failed.';
comment on column bi_sync_health.started_at is 'When the refresh started.';
comment on column bi_sync_health.finished_at is 'When it finished; null while running.';
comment on column bi_sync_health.seconds is 'Duration so far, in seconds.';
comment on column bi_sync_health.suppliers_total is 'Suppliers listed at the start.';
comment on column bi_sync_health.suppliers_done is 'Suppliers read completely.';
comment on column bi_sync_health.suppliers_failed is 'Suppliers whose read failed.';
comment on column bi_sync_health.pages is 'Pages of plots read.';
comment on column bi_sync_health.plots_seen is 'Plots read (a plot reached through two suppliers is read twice).';
comment on column bi_sync_health.requests is 'Requests to the service, retries included.';
comment on column bi_sync_health.retries is 'Requests repeated after a 429, 5xx or network error.';
comment on column bi_sync_health.rate_limited is 'Responses 429 (rate limited).';
comment on column bi_sync_health.rows_inserted is 'Rows inserted, all tables together (sync_run_counts).';
comment on column bi_sync_health.rows_updated is 'Rows rewritten because they changed.';
comment on column bi_sync_health.rows_unchanged is 'Rows seen and left as they were.';
comment on column bi_sync_health.rows_deleted is 'Rows soft-deleted.';
comment on column bi_sync_health.record_issues is 'Records the service sent that could not be stored as sent (sync_issues).';
comment on column bi_sync_health.error is 'Why the refresh failed or was partial.';
comment on column bi_sync_health.seconds_since_last_success is 'Seconds since the last successful refresh finished (the same on every row).';
comment on column bi_sync_health.deletions_confirmed is 'Rows soft-deleted because they were proven gone at the source.';
comment on column bi_sync_health.deletions_deferred is 'Plot links missed but not proven gone: kept live, settled by the next refresh.';

grant select on bi_sync_health to ddsync_reader;
