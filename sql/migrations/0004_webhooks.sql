-- Webhooks at the service (ddsync's and others'), their delivery attempts and stats, and the events
-- ddsync's receiver accepted.

create table webhooks (
  id text primary key,
  -- The name in DDSYNC_WEBHOOKS of a webhook ddsync manages (its description carries [ddsync:<name>]); null otherwise.
  name text,
  managed boolean not null default false,
  url text not null,
  description text,
  events text[] not null default '{}',
  is_active boolean,
  created_at timestamptz,
  updated_at timestamptz,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  -- Set when the service no longer lists it.
  deleted_at timestamptz
);
create unique index webhooks_managed_name on webhooks (name) where managed and deleted_at is null;
comment on table webhooks is 'Webhooks of the business at the service; `managed` ones are kept as DDSYNC_WEBHOOKS says, the others are never touched.';

-- Each delivery attempt once.
create table webhook_attempts (
  id text primary key,
  webhook_id text not null,
  msg_id text,
  url text,
  status text,
  response_status_code integer,
  -- The endpoint's answer, at most 2,000 characters.
  response text,
  attempted_at timestamptz,
  event_type text,
  first_seen_at timestamptz not null default now()
);
create index webhook_attempts_webhook on webhook_attempts (webhook_id, attempted_at desc);

-- A snapshot of the service's counters at each reconciliation.
create table webhook_stats (
  webhook_id text not null,
  taken_at timestamptz not null default now(),
  successful_messages bigint not null,
  failed_messages bigint not null,
  primary key (webhook_id, taken_at)
);

-- Each message the receiver accepted, once (retries of the same message id are counted, not stored again).
create table webhook_events (
  msg_id text primary key,
  webhook_name text not null,
  event_type text,
  payload jsonb not null,
  -- The message's own time (svix-timestamp) and when ddsync received it first and last.
  sent_at timestamptz,
  received_at timestamptz not null default now(),
  last_received_at timestamptz not null default now(),
  deliveries integer not null default 1,
  transaction_id text,
  -- What was done with it: pending, signalled, no_transaction (unknown to ddsync), workflow_closed, ignored (another event type), failed.
  handling text not null default 'pending',
  handling_error text,
  handled_at timestamptz
);
create index webhook_events_pending on webhook_events (received_at) where handling = 'pending';

create view bi_webhook_health as
select w.id as webhook_id, w.name, w.managed, w.url, w.is_active,
       s.successful_messages, s.failed_messages,
       case when coalesce(s.successful_messages, 0) + coalesce(s.failed_messages, 0) = 0 then null
            else round(s.successful_messages::numeric / (s.successful_messages + s.failed_messages), 4) end as success_rate,
       a.last_attempt_at, a.last_attempt_status, a.last_failure_at, a.failures_24h,
       (a.last_attempt_status is not null and a.last_attempt_status <> 'SUCCESS') as failing
from webhooks w
left join lateral (
  select successful_messages, failed_messages from webhook_stats x where x.webhook_id = w.id order by taken_at desc limit 1
) s on true
left join lateral (
  select max(attempted_at) as last_attempt_at,
         (array_agg(status order by attempted_at desc))[1] as last_attempt_status,
         max(attempted_at) filter (where status <> 'SUCCESS') as last_failure_at,
         count(*) filter (where status <> 'SUCCESS' and attempted_at > now() - interval '24 hours') as failures_24h
  from webhook_attempts y where y.webhook_id = w.id
) a on true
where w.deleted_at is null;
comment on view bi_webhook_health is 'Per webhook: success rate (latest stats), last attempt and failure, failures in the last 24 hours, and whether it is failing now.';

grant select on all tables in schema public to ddsync_reader;
