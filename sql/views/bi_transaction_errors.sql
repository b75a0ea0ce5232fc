create view bi_transaction_errors as
select t.state, coalesce(t.error_reason, t.last_error, '(no reason given)') as reason, count(*) as transactions, max(t.updated_at) as latest
from transactions t
where t.state in ('error', 'failed', 'timed_out', 'withdrawn')
group by t.state, coalesce(t.error_reason, t.last_error, '(no reason given)');

comment on view bi_transaction_errors is 'One row per outcome and reason of transactions that ended without a DDS reference. Each transaction is in one row: transactions may be summed.';
comment on column bi_transaction_errors.state is 'error (rejected by the EU system), failed (refused by the service), timed_out or withdrawn.';
comment on column bi_transaction_errors.reason is 'The service''s reason, else the last error ddsync met.';
comment on column bi_transaction_errors.transactions is 'Transactions with this outcome and reason.';
comment on column bi_transaction_errors.latest is 'The latest of their updates.';

grant select on bi_transaction_errors to ddsync_reader;
