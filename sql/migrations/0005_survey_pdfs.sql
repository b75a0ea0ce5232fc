-- The survey-response PDF archive: a queue of survey responses whose PDF is to be kept, and what
-- became of each (`ddsync pdfs add`, the archiveSurveyPdfs workflow, `ddsync pdfs status`).

create table survey_response_pdfs (
  -- The survey response's id at the service (a UUID, lower case; checked by `ddsync pdfs add`).
  id text primary key,
  -- queued: added, not tried yet; waiting: 422, the survey response is not COMPLETED yet;
  -- retrying: the last attempt failed (5xx, network, a body that is no PDF, another error);
  -- archived: stored (final); gone: 404, the survey response does not exist (final, not retried).
  state text not null default 'queued' check (state in ('queued', 'waiting', 'retrying', 'archived', 'gone')),
  queued_at timestamptz not null default now(),
  -- When it is due (queued, waiting, retrying); null once archived or gone. While an archive run
  -- holds it, the end of that run's lease.
  next_attempt_at timestamptz default now(),
  -- The archive run (its workflow id) holding the entry until next_attempt_at; it alone records an
  -- attempt that did not archive it, so a run whose lease ran out cannot overwrite another's.
  lease_owner text,
  -- Archive runs that tried it (each may include a few quick retries of a 5xx or network error).
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  -- The stored PDF: its size, SHA-256 (hex) and path relative to the archive directory
  -- (`<sha[0..2]>/<sha>.pdf`; survey responses with identical PDFs share one file).
  size_bytes bigint,
  sha256 text check (sha256 ~ '^[0-9a-f]{64}$'),
  storage_path text,
  archived_at timestamptz,
  -- The HTTP status of the last attempt (null when no response came) and its error, if any.
  last_status integer,
  last_error text,
  check ((state = 'archived') = (sha256 is not null and storage_path is not null and size_bytes is not null and archived_at is not null)),
  check ((state in ('archived', 'gone')) = (next_attempt_at is null))
);
create index survey_response_pdfs_due on survey_response_pdfs (next_attempt_at) where state in ('queued', 'waiting', 'retrying');
create index survey_response_pdfs_sha256 on survey_response_pdfs (sha256) where sha256 is not null;
comment on table survey_response_pdfs is 'Survey responses whose PDF ddsync archives: state (queued, waiting, retrying, archived, gone), attempts and backoff, and the stored file (size, SHA-256, path under the archive directory).';

create view bi_pdf_archive as
select count(*) filter (where state = 'queued') as queued,
       count(*) filter (where state = 'waiting') as waiting,
       count(*) filter (where state = 'retrying') as retrying,
       count(*) filter (where state = 'archived') as archived,
       count(*) filter (where state = 'gone') as gone,
       count(*) as total,
       min(queued_at) filter (where state = 'waiting') as oldest_waiting_since,
       min(next_attempt_at) filter (where state in ('queued', 'waiting', 'retrying')) as next_attempt_at,
       coalesce(sum(size_bytes) filter (where state = 'archived'), 0)::bigint as archived_bytes,
       count(distinct sha256) filter (where state = 'archived') as stored_files,
       (select coalesce(sum(f.size_bytes), 0)::bigint
        from (select distinct sha256, size_bytes from survey_response_pdfs where state = 'archived') f) as stored_bytes,
       max(archived_at) as last_archived_at
from survey_response_pdfs;
comment on view bi_pdf_archive is 'One row: survey-response PDFs per state, the oldest still waiting for COMPLETED (queued_at), the next attempt, archived bytes (per survey response) and stored files and bytes (identical PDFs stored once).';

grant select on all tables in schema public to ddsync_reader;
