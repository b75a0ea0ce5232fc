-- A step of a submission that keeps failing (a database error, a bug, an outage) is retried without
-- end, so that no transaction is lost to what a deploy fixes. While it repeats, the warehouse says
-- so where `ddsync submissions status` and analysts look: the error, how many attempts in a row
-- failed and when the last did. A step that succeeds clears them.
alter table transactions
  add column failed_attempts integer not null default 0,
  add column last_failed_at timestamptz;
comment on column transactions.failed_attempts is 'Attempts in a row of its current step (create and submit, read, delete, record its end) that failed and are being retried; 0 once the step succeeds.';
comment on column transactions.last_failed_at is 'When the last of those failed attempts failed; null when none is being retried.';
comment on column transactions.last_error is 'While failed_attempts > 0: the error of the step being retried. Once it ended without a DDS reference (failed, timed_out, cancelled): why.';

alter table submission_batches
  add column last_error text,
  add column failed_attempts integer not null default 0,
  add column last_failed_at timestamptz;
comment on column submission_batches.last_error is 'The error of a step of the batch itself (reading where it stands, choosing what to start, closing it) that is being retried; null once it succeeds.';
comment on column submission_batches.failed_attempts is 'Attempts in a row of that step that failed; 0 once it succeeds.';
comment on column submission_batches.last_failed_at is 'When the last of those attempts failed.';

-- A create answered with a refusal (401, 400, 403, 409, 422, 429, 503) was not applied: it no longer
-- holds back the next one (see activities/submission/activities.ts).
comment on column transaction_requests.create_sent_at is 'When the last POST /transactions for this key that the service may have applied was sent (a second is not sent until it had time to settle); a create the service refused does not count.';

-- Earlier versions left a batch with nothing to send (every row invalid or submitted before) open
-- for ever: no workflow runs for it. Such a batch whose file was read to its end (rows counted) is done.
update submission_batches b set status = 'done', finished_at = coalesce(b.finished_at, now())
where b.status = 'open' and b.accepted = 0 and b.rows > 0
  and not exists (select 1 from transaction_requests r where r.batch_id = b.id and r.status = 'accepted');
