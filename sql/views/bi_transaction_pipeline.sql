create view bi_transaction_pipeline as
select t.batch_id, t.state, normalise_status(t.status) as status, t.status as status_raw, count(*) as transactions,
       min(t.updated_at) as oldest_update, max(t.updated_at) as latest_update
from transactions t
group by t.batch_id, t.state, t.status;

comment on view bi_transaction_pipeline is 'One row per batch, ddsync state and service status: how many transactions stand there. Each transaction is in one row: transactions may be summed.';
comment on column bi_transaction_pipeline.batch_id is 'The submission batch (submission_batches.id).';
comment on column bi_transaction_pipeline.state is 'ddsync''s state: pending, created, submitted, available, error, withdrawn, failed, timed_out, cancelled.';
comment on column bi_transaction_pipeline.status is 'The service''s status, normalised: draft, to_submit, submitted, available, error, withdrawn; other values kept; null before the transaction was created.';
comment on column bi_transaction_pipeline.status_raw is 'The service''s status as sent.';
comment on column bi_transaction_pipeline.transactions is 'Transactions in this batch, state and status.';
comment on column bi_transaction_pipeline.oldest_update is 'The longest-unchanged transaction''s last update.';
comment on column bi_transaction_pipeline.latest_update is 'The latest update.';

grant select on bi_transaction_pipeline to ddsync_reader;
