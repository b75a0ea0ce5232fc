-- Bulk submission in chunks (workflow submitBatch): one workflow per batch whose activities create
-- and submit transactions in chunks and read the due ones in bulk. When each transaction is next read
-- is kept here, computed from the ledger's own times (the poll backoff, the EU system's 30-minute wait
-- after SUBMITTED, the deadline), so one query finds what is due and when the next one is.
alter table transactions
  add column polls integer not null default 0,
  add column next_poll_at timestamptz,
  add column woken_at timestamptz;
comment on column transactions.polls is 'Reads of its status since it was submitted (the poll backoff doubles with each, up to DDSYNC_TX_MAX_POLL).';
comment on column transactions.next_poll_at is 'When its status is read next (backoff, EU wait and deadline applied); null until it was submitted by a batch followed in bulk.';
comment on column transactions.woken_at is 'When a transaction.updated webhook asked for an early read that has not happened yet; cleared by the read.';
create index transactions_due on transactions (batch_id, next_poll_at) where state = 'submitted';

alter table submission_batches add column followed_in_bulk boolean not null default false;
comment on column submission_batches.followed_in_bulk is 'Run by the batch workflow (submitBatch), which follows its transactions in bulk: webhook events wake the batch, not a workflow per transaction (batches of earlier versions run to their end as they started).';
