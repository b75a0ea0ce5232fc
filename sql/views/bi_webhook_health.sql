create view bi_webhook_health as
select w.id as webhook_id, w.name as webhook_name, w.managed, w.url, w.is_active,
       s.successful_messages, s.failed_messages,
       case when coalesce(s.successful_messages, 0) + coalesce(s.failed_messages, 0) = 0 then null
            else round(s.successful_messages::numeric / (s.successful_messages + s.failed_messages), 4) end as success_rate,
       a.last_attempt_at,
       normalise_status(a.last_attempt_status) as last_attempt_status,
       a.last_attempt_status as last_attempt_status_raw,
       a.last_failure_at, a.failures_24h,
       (normalise_status(a.last_attempt_status) <> 'success') is true as failing
from webhooks w
left join lateral (
  select successful_messages, failed_messages from webhook_stats x where x.webhook_id = w.id order by taken_at desc limit 1
) s on true
left join lateral (
  select max(attempted_at) as last_attempt_at,
         (array_agg(status order by attempted_at desc))[1] as last_attempt_status,
         max(attempted_at) filter (where normalise_status(status) <> 'success') as last_failure_at,
         count(*) filter (where normalise_status(status) <> 'success' and attempted_at > now() - interval '24 hours') as failures_24h
  from webhook_attempts y where y.webhook_id = w.id
) a on true
where w.deleted_at is null;

comment on view bi_webhook_health is 'One row per webhook the service lists: success rate (latest stats), last attempt and failure, failures in the last 24 hours, whether it is failing now. Message counts may be summed across webhooks.';
comment on column bi_webhook_health.webhook_id is 'The webhook (webhooks.id).';
comment on column bi_webhook_health.webhook_name is 'Its name in DDSYNC_WEBHOOKS when ddsync manages it; null otherwise.';
comment on column bi_webhook_health.managed is 'ddsync keeps it as DDSYNC_WEBHOOKS says.';
comment on column bi_webhook_health.url is 'Where the service delivers.';
comment on column bi_webhook_health.is_active is 'Active at the service.';
comment on column bi_webhook_health.successful_messages is 'Messages delivered, from the latest stats snapshot.';
comment on column bi_webhook_health.failed_messages is 'Messages that failed, from the latest stats snapshot.';
comment on column bi_webhook_health.success_rate is 'successful / (successful + failed), 0 to 1; null before any message.';
comment on column bi_webhook_health.last_attempt_at is 'When the latest delivery attempt was made.';
comment on column bi_webhook_health.last_attempt_status is 'Its status, normalised: success (other values as the service sends them, normalised).';
comment on column bi_webhook_health.last_attempt_status_raw is 'Its status as the service sent it.';
comment on column bi_webhook_health.last_failure_at is 'When the latest attempt that did not succeed was made.';
comment on column bi_webhook_health.failures_24h is 'Attempts that did not succeed in the last 24 hours.';
comment on column bi_webhook_health.failing is 'The latest attempt did not succeed.';

grant select on bi_webhook_health to ddsync_reader;
