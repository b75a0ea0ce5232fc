create view bi_sync_status as
with
-- The defaults of `ddsync status` with every setting at its default (cli/status/thresholds.ts).
thresholds as (
  select 9 * 3600 as refresh_warning_s, 12 * 3600 as refresh_critical_s, 3 as failures_in_a_row,
         3 * 3600 as tx_warning_s, 24 * 3600 as tx_critical_s, 30 * 60 as pdf_overdue_s
),
-- The latest 100 refreshes that ended: failures in a row are counted among them.
ended_runs as (
  select r.id, r.status, r.finished_at, r.error
  from sync_runs r
  where r.status <> 'running' and r.finished_at is not null
  order by r.finished_at desc, r.id
  limit 100
),
last_success as (
  select r.id, r.finished_at from sync_runs r where r.status = 'succeeded' order by r.finished_at desc limit 1
),
refresh as (
  select
    1 as position,
    'refresh'::text as check_name,
    ls.finished_at as since,
    (select count(*) from sync_runs r
     where r.status in ('failed', 'partial') and r.finished_at > coalesce(ls.finished_at, '-infinity'))::bigint as items,
    (select count(*) from sync_runs r
     where r.status = 'failed' and r.finished_at > coalesce(ls.finished_at, '-infinity'))::bigint as failing,
    (select (coalesce(min(n) filter (where status <> 'failed'), count(*) + 1) - 1)::int
     from (select status, row_number() over (order by finished_at desc, id) as n from ended_runs) e) as failures_in_a_row,
    ls.id::text as oldest_item,
    concat_ws('; ',
      case
        when ls.id is not null then 'last successful refresh finished ' || time_and_age(ls.finished_at)
        when exists (select 1 from sync_runs) then 'no refresh has succeeded yet'
        else 'no refresh has run yet'
      end,
      (select format('since then %s ended partial or failed', plural(count(*), 'refresh', 'refreshes')) from sync_runs r
       where r.status in ('failed', 'partial') and r.finished_at > coalesce(ls.finished_at, '-infinity') having count(*) > 0),
      (select format('the latest ended %s: %s', e.status, coalesce(left(e.error, 200), 'no reason recorded'))
       from (select * from ended_runs order by finished_at desc, id limit 1) e where e.status <> 'succeeded'),
      (select 'one running since ' || time_and_age(min(r.started_at)) from sync_runs r where r.status = 'running' having count(*) > 0)
    ) as message
  from (select 1) one
  left join last_success ls on true
),
-- Each part of the network read by those refreshes (a supplier, the own plots, the network listing,
-- the invitations), newest read first.
reads as (
  select s.scope, s.kind, s.status, s.error, e.finished_at,
         row_number() over (partition by s.scope order by e.finished_at desc, e.id) as n
  from ended_runs e
  join sync_run_scopes s on s.run_id = e.id
),
-- Parts whose last read failed, with how many in a row; a supplier no longer connected is left out.
failing_reads as (
  select x.scope, x.kind, x.in_a_row, first_failed.finished_at as failing_since, last_read.error,
         case x.kind
           when 'supplier' then coalesce(b.name, x.scope) || ' (' || x.scope || ')'
           when 'own_plots' then 'own plots'
           when 'network' then 'network listing'
           else x.kind
         end as label
  from (
    select scope, min(kind) as kind, (coalesce(min(n) filter (where status = 'succeeded'), count(*) + 1) - 1)::int as in_a_row
    from reads group by scope
  ) x
  join reads first_failed on first_failed.scope = x.scope and first_failed.n = x.in_a_row
  join reads last_read on last_read.scope = x.scope and last_read.n = 1
  left join businesses b on b.id = x.scope and x.kind = 'supplier'
  where x.in_a_row > 0
    and (x.kind <> 'supplier'
         or exists (select 1 from business_connections c
                    where c.partner_business_id = x.scope and c.role = 'supplier' and c.deleted_at is null))
),
scans as (
  select
    2 as position,
    'scans'::text as check_name,
    min(f.failing_since) as since,
    count(f.scope) as items,
    count(f.scope) as failing,
    coalesce(max(f.in_a_row), 0) as failures_in_a_row,
    (array_agg(f.scope order by f.in_a_row desc, f.failing_since, f.scope))[1] as oldest_item,
    case
      when count(f.scope) = 0 and not exists (select 1 from reads) then 'no refresh has read anything yet'
      when count(f.scope) = 0 then 'the last read of every part succeeded: ' || concat_ws(', ',
             plural((select count(distinct scope) from reads where kind = 'supplier'), 'supplier', 'suppliers'),
             (select string_agg(distinct case kind when 'own_plots' then 'own plots' when 'network' then 'network listing' else kind end, ', ')
              from reads where kind <> 'supplier'))
      else format('%s whose last read failed: ', plural(count(f.scope), 'part', 'parts')) ||
           string_agg(format('%s, %s in a row since %s%s', f.label, f.in_a_row, time_and_age(f.failing_since),
                             coalesce(': ' || left(f.error, 160), '')),
                      '; ' order by f.in_a_row desc, f.failing_since, f.scope)
    end as message
  from failing_reads f
),
deletions as (
  select
    3 as position,
    'deletions'::text as check_name,
    min(ps.missing_since) as since,
    count(*) as items,
    0::bigint as failing,
    null::int as failures_in_a_row,
    (array_agg(ps.supplier_id order by ps.missing_since, ps.supplier_id, ps.plot_id))[1] as oldest_item,
    case
      when count(*) = 0 then 'no deletion deferred'
      else format('%s of %s missed by a refresh but not proven gone; the oldest, of supplier %s, since %s: the next complete read of its supplier confirms or clears each',
                  plural(count(*), 'plot link', 'plot links'), plural(count(distinct ps.supplier_id), 'supplier', 'suppliers'),
                  (array_agg(ps.supplier_id order by ps.missing_since, ps.supplier_id, ps.plot_id))[1],
                  time_and_age(min(ps.missing_since)))
    end as message
  from plot_suppliers ps
  where ps.missing_since is not null and ps.deleted_at is null
),
-- Transactions without a final status: since they were submitted, or since their batch was handed
-- over while not submitted yet. Unsubmitted ones of a cancelled batch are not sent, so not waited for.
waiting as (
  select t.key, t.batch_id, t.failed_attempts, coalesce(t.submitted_at, b.created_at) as waiting_since
  from transactions t
  join submission_batches b on b.id = t.batch_id
  where t.state in ('pending', 'created', 'submitted') and (t.state = 'submitted' or b.status <> 'cancelled')
),
failing_batches as (
  select b.failed_attempts from submission_batches b where b.status = 'open' and b.failed_attempts > 0
),
transactions_check as (
  select
    4 as position,
    'transactions'::text as check_name,
    min(w.waiting_since) as since,
    count(*) as items,
    count(*) filter (where w.failed_attempts > 0) + (select count(*) from failing_batches) as failing,
    greatest(coalesce(max(w.failed_attempts), 0), coalesce((select max(failed_attempts) from failing_batches), 0)) as failures_in_a_row,
    (array_agg(w.batch_id::text order by w.waiting_since, w.key))[1] as oldest_item,
    concat_ws('; ',
      case
        when count(*) = 0 then 'no transaction is waiting for a final status'
        else format('%s without a final status in %s; the oldest, of batch %s, waiting since %s',
                    plural(count(*), 'transaction', 'transactions'), plural(count(distinct w.batch_id), 'batch', 'batches'),
                    (array_agg(w.batch_id::text order by w.waiting_since, w.key))[1], time_and_age(min(w.waiting_since)))
      end,
      case
        when count(*) filter (where w.failed_attempts > 0) + (select count(*) from failing_batches) > 0
        then format('%s failing and retried, up to %s times in a row (ddsync submissions status BATCH says why)',
                    plural(count(*) filter (where w.failed_attempts > 0) + (select count(*) from failing_batches), 'step', 'steps'),
                    greatest(coalesce(max(w.failed_attempts), 0), coalesce((select max(failed_attempts) from failing_batches), 0)))
      end
    ) as message
  from waiting w
),
-- ddsync's webhooks whose deliveries have failed since their last success (bi_webhook_health.failing).
managed_hooks as (
  select w.id, w.name from webhooks w where w.managed and w.deleted_at is null
),
failing_hooks as (
  select h.name, count(*) as failures, min(a.attempted_at) as failing_since,
         (array_agg(a.response_status_code order by a.attempted_at desc))[1] as last_code
  from managed_hooks h
  join webhook_attempts a on a.webhook_id = h.id
   and a.attempted_at > coalesce((select max(s.attempted_at) from webhook_attempts s
                                  where s.webhook_id = h.id and normalise_status(s.status) = 'success'), '-infinity')
  group by h.id, h.name
),
webhooks_check as (
  select
    5 as position,
    'webhooks'::text as check_name,
    min(f.failing_since) as since,
    count(f.name) as items,
    count(f.name) as failing,
    max(f.failures)::int as failures_in_a_row,
    (array_agg(f.name order by f.failing_since, f.name))[1] as oldest_item,
    concat_ws('; ',
      case
        when count(f.name) = 0 and not exists (select 1 from managed_hooks) then 'no webhook of ddsync''s recorded'
        when count(f.name) = 0 then format('%s of ddsync''s recorded, none failing', plural((select count(*) from managed_hooks), 'webhook', 'webhooks'))
        else format('%s failing: ', plural(count(f.name), 'webhook', 'webhooks')) ||
             string_agg(format('%s, %s since %s%s', f.name, plural(f.failures, 'failed delivery', 'failed deliveries'),
                               time_and_age(f.failing_since), coalesce(', last answer ' || f.last_code, '')),
                        '; ' order by f.failing_since, f.name)
      end,
      (select 'attempts and stats last pulled ' || time_and_age(max(s.taken_at))
       from webhook_stats s join managed_hooks h on h.id = s.webhook_id having count(*) > 0)
    ) as message
  from failing_hooks f
),
-- The archive's backlog: what is queued, waiting for the survey response to be COMPLETED, or
-- retrying. An entry due and not tried for long means no archive run is taking it.
backlog as (
  select p.id, p.state, p.next_attempt_at
  from survey_response_pdfs p
  where p.state in ('queued', 'waiting', 'retrying')
),
pdfs_check as (
  select
    6 as position,
    'pdfs'::text as check_name,
    min(b.next_attempt_at) filter (where b.next_attempt_at < now()) as since,
    count(*) as items,
    count(*) filter (where b.state = 'retrying') as failing,
    null::int as failures_in_a_row,
    (array_agg(b.id order by b.next_attempt_at, b.id) filter (where b.next_attempt_at < now()))[1] as oldest_item,
    concat_ws('; ',
      case
        when count(*) = 0 then 'nothing queued'
        else format('%s in the backlog (%s queued, %s waiting for the survey response to be completed, %s retrying after an error)',
                    plural(count(*), 'PDF', 'PDFs'), count(*) filter (where b.state = 'queued'), count(*) filter (where b.state = 'waiting'),
                    count(*) filter (where b.state = 'retrying'))
      end,
      case
        when count(*) filter (where b.next_attempt_at < now()) > 0
        then format('%s due, the longest since %s', count(*) filter (where b.next_attempt_at < now()),
                    time_and_age(min(b.next_attempt_at) filter (where b.next_attempt_at < now())))
      end
    ) as message
  from backlog b
),
checks as (
  select * from refresh
  union all select * from scans
  union all select * from deletions
  union all select * from transactions_check
  union all select * from webhooks_check
  union all select * from pdfs_check
)
select
  c.check_name,
  case c.check_name
    when 'refresh' then
      case
        when c.since is null or a.s >= t.refresh_critical_s or c.failures_in_a_row >= t.failures_in_a_row then 'critical'
        when a.s >= t.refresh_warning_s or c.failures_in_a_row >= 1 then 'warning'
        else 'ok'
      end
    when 'scans' then
      case when c.failures_in_a_row >= t.failures_in_a_row then 'critical' when c.items > 0 then 'warning' else 'ok' end
    when 'deletions' then
      case when c.items > 0 and a.s >= t.refresh_critical_s then 'warning' else 'ok' end
    when 'transactions' then
      case
        when a.s >= t.tx_critical_s then 'critical'
        when a.s >= t.tx_warning_s or c.failures_in_a_row >= t.failures_in_a_row then 'warning'
        else 'ok'
      end
    when 'webhooks' then
      case when c.items > 0 then 'warning' else 'ok' end
    when 'pdfs' then
      case when a.s >= t.pdf_overdue_s then 'warning' else 'ok' end
  end as level,
  c.since,
  a.s::bigint as age_seconds,
  c.items,
  c.failing,
  c.failures_in_a_row,
  c.oldest_item,
  c.message
from checks c
cross join thresholds t
cross join lateral (select floor(extract(epoch from now() - c.since)) as s) a
order by c.position;

comment on view bi_sync_status is 'One row per check of what the warehouse alone knows: refresh (the age of the last successful refresh), scans (parts of the network whose last read failed), deletions (deferred), transactions (without a final status), webhooks (ddsync''s, failing), pdfs (the archive''s backlog). Each row has its facts, a sentence and a level judged with the default thresholds of `ddsync status` (schedule every 6h: warning after 9h, critical after 12h; 3 failures in a row; transactions 3h / 1d; PDFs due for 30 min). `ddsync status` reads this view, judges it with its own flags and settings, and adds the schedules and workers Temporal knows. Do not sum across rows.';
comment on column bi_sync_status.check_name is 'refresh, scans, deletions, transactions, webhooks or pdfs: always these six rows, in this order.';
comment on column bi_sync_status.level is 'ok, warning or critical, with the default thresholds: refresh critical when none succeeded, the last success is 12h old or 3 refreshes failed in a row, warning from 9h or 1 failure; scans critical when a part failed 3 reads in a row, warning from 1; deletions warning when one has waited 12h; transactions critical when one waits a day, warning from 3h or a step failing 3 times in a row; webhooks warning when one is failing; pdfs warning when one has been due for 30 min.';
comment on column bi_sync_status.since is 'Since when: the last successful refresh (refresh); the first failed read of the current failures (scans); the oldest deferral (deletions); the oldest transaction''s submission, or its batch''s intake if not submitted (transactions); the first failed delivery since the last success (webhooks); the earliest due time not tried yet (pdfs). Null when nothing is waiting or failing (or, for refresh, when none succeeded).';
comment on column bi_sync_status.age_seconds is 'Seconds from since to now.';
comment on column bi_sync_status.items is 'How many: refreshes ended partial or failed since the last success; parts whose last read failed; deferred plot links; transactions without a final status; failing webhooks; PDFs in the backlog.';
comment on column bi_sync_status.failing is 'Of those, failing now: refreshes that failed; parts failing; 0 for deletions; transactions and batches whose current step is failing and being retried; failing webhooks; PDFs retrying after an error.';
comment on column bi_sync_status.failures_in_a_row is 'The longest run of failures: the latest refreshes that failed one after another (among the last 100); a part''s failed reads in a row; a transaction''s or batch''s failed attempts of its current step; a webhook''s failed deliveries since its last success; null for deletions and pdfs.';
comment on column bi_sync_status.oldest_item is 'What since refers to: the last successful run (sync_runs.id), the part failing longest (a supplier''s business id, own-plots, network or invitations), the supplier of the oldest deferral, the batch of the oldest transaction (submission_batches.id), the webhook failing longest (webhooks.name), the survey response due longest (survey_response_pdfs.id).';
comment on column bi_sync_status.message is 'One sentence of the facts, with times in UTC and their age.';

grant select on bi_sync_status to ddsync_reader;
