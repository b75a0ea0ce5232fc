-- Offset pages are not a snapshot: a record not seen by one scan of a supplier may have slid across a
-- page boundary while the source changed. The sweep soft-deletes only what it can prove gone
-- (docs/refresh.md, "Deletes while the source moves"); what it cannot prove yet is deferred.

-- The hash of each page's text as this run read it, compared with a verification read of the same page.
alter table sync_pages add column content_hash text;

-- The verification read of a supplier whose scan missed rows the warehouse holds:
-- not_needed (nothing was missing, or the scan was one page, read in one response),
-- stable (every page read again held the same plots in the same order: what is missing is gone),
-- unstable (the source changed between the two reads: what is still missing is deferred).
alter table sync_run_scopes
  add column missing integer not null default 0,
  add column verify_status text check (verify_status in ('not_needed', 'stable', 'unstable')),
  add column verify_pages integer not null default 0,
  add column verify_requests integer not null default 0,
  -- Ids the scan missed that the verification read found (they slid across a page boundary).
  add column verify_seen text[] not null default '{}';
comment on column sync_run_scopes.missing is 'Live rows of this supplier that the scan did not see (candidates for deletion).';
comment on column sync_run_scopes.verify_status is 'Verification read of a scan that missed rows: not_needed, stable (what is missing is gone) or unstable (the source changed meanwhile: deletions deferred).';
comment on column sync_run_scopes.verify_pages is 'Pages read again to verify the scan.';
comment on column sync_run_scopes.verify_requests is 'Requests of the verification read, retries included.';
comment on column sync_run_scopes.verify_seen is 'Rows the scan missed and the verification read found.';

-- A live link a complete refresh did not see but could not prove gone: it stays live, marked. The next
-- complete refresh that misses it again soft-deletes it; one that sees it clears the mark.
alter table plot_suppliers add column missing_since timestamptz;
create index plot_suppliers_missing on plot_suppliers (supplier_id) where missing_since is not null and deleted_at is null;
comment on column plot_suppliers.missing_since is 'Set when a refresh missed this live link but could not prove it gone (deletion deferred); cleared when seen again.';

alter table sync_runs
  add column deletions_confirmed bigint not null default 0,
  add column deletions_deferred bigint not null default 0,
  add column verify_pages integer not null default 0;
comment on column sync_runs.deletions_confirmed is 'Rows soft-deleted by this run because they were proven gone at the source.';
comment on column sync_runs.deletions_deferred is 'Plot links this run missed but could not prove gone: kept live, confirmed or cleared by the next refresh.';
comment on column sync_runs.verify_pages is 'Pages read a second time to verify scans that missed rows (the extra reads of deletion checks).';
