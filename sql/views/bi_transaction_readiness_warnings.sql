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
