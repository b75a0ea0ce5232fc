-- The readiness gate of `ddsync submit` (docs/submission.md#the-readiness-gate). Under `block` a row
-- whose plots are known not to be ready is refused like any invalid row (transaction_requests.errors);
-- under `warn` it is sent and what the gate found is kept with the row, so an analyst can tell later
-- which statements went out with plots that were not ready, and why. The batch keeps the policy it
-- was taken in under and how old the warehouse's data was: a gate that found nothing on stale data
-- vouches for less than one that found nothing on fresh data.
alter table transaction_requests add column readiness_warnings jsonb;
comment on column transaction_requests.readiness_warnings is 'What the readiness gate of ddsync submit found for an accepted row it let through (policy warn, or what block does not refuse on: stale data, a supplier without plots in the warehouse): [{field, code, rule}]; null when it found nothing or the policy was off.';

alter table submission_batches
  add column readiness_policy text check (readiness_policy in ('block', 'warn', 'off')),
  add column readiness_data_as_of timestamptz,
  add column readiness_note text;
comment on column submission_batches.readiness_policy is 'The readiness policy the file was taken in under (block, warn, off); null for batches taken in before the gate existed.';
comment on column submission_batches.readiness_data_as_of is 'When the refresh the gate judged by finished (the last successful one at intake); null when the warehouse had never been refreshed or the policy was off.';
comment on column submission_batches.readiness_note is 'What the gate said of the data it judged by, in a sentence: never refreshed, or older than DDSYNC_SUBMIT_MAX_DATA_AGE; null when fresh or the policy was off.';

create view bi_transaction_readiness_warnings as
select r.batch_id, r.key, r.line, coalesce(t.state, 'pending') as state, b.readiness_policy,
       b.readiness_data_as_of, b.readiness_note,
       jsonb_array_length(r.readiness_warnings) as warnings,
       (select array_agg(distinct w->>'code' order by w->>'code') from jsonb_array_elements(r.readiness_warnings) w) as codes,
       r.readiness_warnings as details
from transaction_requests r
join submission_batches b on b.id = r.batch_id
left join transactions t on t.key = r.key and t.batch_id = r.batch_id
where r.status = 'accepted' and r.readiness_warnings is not null;
comment on view bi_transaction_readiness_warnings is 'One row per transaction sent with a warning of the readiness gate of ddsync submit: plots not ready, an EU per-statement limit passed, stale data (docs/submission.md#the-readiness-gate).';
comment on column bi_transaction_readiness_warnings.batch_id is 'The submission batch (submission_batches.id).';
comment on column bi_transaction_readiness_warnings.key is 'The row''s key: the transaction''s customId.';
comment on column bi_transaction_readiness_warnings.line is 'Line of the file (or position in a JSON array).';
comment on column bi_transaction_readiness_warnings.state is 'ddsync''s state of the transaction (transactions.state).';
comment on column bi_transaction_readiness_warnings.readiness_policy is 'The policy the file was taken in under (warn, or block for what block does not refuse on).';
comment on column bi_transaction_readiness_warnings.readiness_data_as_of is 'When the refresh the gate judged by finished; null: never refreshed.';
comment on column bi_transaction_readiness_warnings.readiness_note is 'What the gate said of the age of its data; null when fresh.';
comment on column bi_transaction_readiness_warnings.warnings is 'How many warnings the row has.';
comment on column bi_transaction_readiness_warnings.codes is 'Their codes, distinct and sorted: plots_not_ready, too_many_producers_per_commodity, too_many_producers_per_statement, geolocation_too_large, supplier_unknown, plot_unknown, data_stale, data_never_refreshed.';
comment on column bi_transaction_readiness_warnings.details is 'The warnings as [{field, code, rule}], each rule a sentence naming plots and finding codes.';
grant select on bi_transaction_readiness_warnings to ddsync_reader;
