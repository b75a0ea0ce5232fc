-- Grouped by scope alone (a scope has one kind): unique per scope, so a view that joins it and reads
-- none of its columns skips the join.
create view sync_last_seen as
select scope, min(kind) as kind, case when min(kind) = 'supplier' then scope end as supplier_business_id, max(finished_at) as last_seen_at
from sync_run_scopes
where status = 'succeeded'
group by scope;

comment on view sync_last_seen is 'One row per part of the network ever read completely (a supplier, the own plots, the network listing, the invitations): when it was last read completely. Live rows of that part were seen then (a complete read that missed one would have soft-deleted it or deferred its deletion).';
comment on column sync_last_seen.scope is 'The part: a supplier''s business id, own-plots, network or invitations.';
comment on column sync_last_seen.kind is 'supplier, own_plots, network or invitations.';
comment on column sync_last_seen.supplier_business_id is 'The supplier''s business id when kind is supplier; null otherwise.';
comment on column sync_last_seen.last_seen_at is 'End of the last refresh that read this part completely.';

grant select on sync_last_seen to ddsync_reader;
