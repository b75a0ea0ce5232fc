-- Bulk transaction submission: the files handed over, each row of them, the transactions at the
-- service, their components and every status observed.

create table submission_batches (
  id uuid primary key,
  source text not null,
  created_at timestamptz not null default now(),
  rows integer not null default 0,
  accepted integer not null default 0,
  invalid integer not null default 0,
  duplicates integer not null default 0,
  workflow_id text,
  -- open: transactions still being created, submitted or followed; done: every one ended; cancelled.
  status text not null default 'open' check (status in ('open', 'done', 'cancelled')),
  finished_at timestamptz
);
comment on table submission_batches is 'One row per file handed to `ddsync submit`: how many rows, accepted, invalid, and already submitted earlier.';

-- One row per row of a file. An accepted row's key is unique across every batch: a key submitted
-- earlier is recorded as a duplicate and not sent again.
create table transaction_requests (
  id bigserial primary key,
  batch_id uuid not null references submission_batches (id) on delete cascade,
  -- Line of an NDJSON file, or position (1-based) in a JSON array.
  line integer not null,
  key text,
  status text not null check (status in ('accepted', 'invalid', 'duplicate')),
  -- The create body (customId = key), for accepted rows.
  payload jsonb,
  -- [{field, rule}] for invalid rows.
  errors jsonb,
  earlier_batch_id uuid,
  create_attempts integer not null default 0,
  created_at timestamptz not null default now()
);
create unique index transaction_requests_key on transaction_requests (key) where status = 'accepted';
create index transaction_requests_batch on transaction_requests (batch_id, line);
comment on table transaction_requests is 'Every row of every submitted file: accepted (with its create body), invalid (with the field and rule of each error) or a duplicate of a key submitted earlier.';

-- One row per accepted request: the transaction at the service and where it stands.
create table transactions (
  key text primary key,
  batch_id uuid not null references submission_batches (id) on delete cascade,
  -- The service's id; null until the transaction was created there.
  id text unique,
  activity_type text,
  country_of_activity text,
  legal_entity_id text,
  -- ddsync's view: pending, created, submitted, available, error, withdrawn, failed (refused by the
  -- service, e.g. not entitled), timed_out (no final status before the deadline), cancelled.
  state text not null default 'pending',
  -- The service's status, as last seen (any string the service sends is kept).
  status text,
  reference_number text,
  verification_number text,
  error_reason text,
  last_error text,
  created_at timestamptz,
  submitted_at timestamptz,
  validated_at timestamptz,
  last_polled_at timestamptz,
  updated_at timestamptz not null default now()
);
create index transactions_batch_state on transactions (batch_id, state);
comment on table transactions is 'Each accepted shipment as a transaction at the service: its id, status, DDS reference and verification number, and when it was created, submitted and validated.';
comment on column transactions.reference_number is 'DDS reference assigned after validation, e.g. 24DKYIGLPU3439.';

create table transaction_components (
  transaction_key text not null references transactions (key) on delete cascade,
  position smallint not null,
  kind text not null check (kind in ('supplier', 'dds_reference')),
  hsn text not null,
  quantity double precision not null,
  unit text not null,
  description text,
  supplier_business_ids text[],
  plot_ids text[],
  dds_references jsonb,
  primary key (transaction_key, position)
);

-- Every status observed, once, with when and how it was seen.
create table transaction_status_events (
  transaction_key text not null references transactions (key) on delete cascade,
  status text not null,
  seen_at timestamptz not null default now(),
  -- create, submit, poll or webhook.
  source text not null,
  primary key (transaction_key, status)
);

create view bi_transaction_pipeline as
select t.batch_id, t.state, coalesce(t.status, '(none)') as status, count(*) as transactions,
       min(t.updated_at) as oldest_update, max(t.updated_at) as latest_update
from transactions t
group by t.batch_id, t.state, t.status;
comment on view bi_transaction_pipeline is 'Transactions per batch, ddsync state and service status.';

create view bi_transaction_latency as
select t.batch_id,
       count(*) as available,
       round(percentile_cont(0.5) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as median_seconds_submit_to_available,
       round(percentile_cont(0.95) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as p95_seconds_submit_to_available
from transactions t
where t.state = 'available' and t.submitted_at is not null and t.validated_at is not null
group by rollup (t.batch_id);
comment on view bi_transaction_latency is 'Time from submit to AVAILABLE (median and p95, seconds) per batch; the row with a null batch_id is over all batches.';

create view bi_transaction_errors as
select t.state, coalesce(t.error_reason, t.last_error, '(no reason given)') as reason, count(*) as transactions, max(t.updated_at) as latest
from transactions t
where t.state in ('error', 'failed', 'timed_out', 'withdrawn')
group by t.state, coalesce(t.error_reason, t.last_error, '(no reason given)');
comment on view bi_transaction_errors is 'Transactions that ended without a DDS reference, by outcome and reason.';

-- New tables and views are readable by BI tools (default privileges cover tables created later by the
-- same role; granted again here for clusters migrated by another role).
grant select on all tables in schema public to ddsync_reader;
