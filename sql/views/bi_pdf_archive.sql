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

comment on view bi_pdf_archive is 'One row: survey-response PDFs per state, the oldest still waiting for COMPLETED, the next attempt, archived bytes (per survey response) and stored files and bytes (identical PDFs stored once).';
comment on column bi_pdf_archive.queued is 'Added, not tried yet.';
comment on column bi_pdf_archive.waiting is 'Survey response not COMPLETED yet (422): tried again later.';
comment on column bi_pdf_archive.retrying is 'Last attempt failed (5xx, network, not a PDF): tried again later.';
comment on column bi_pdf_archive.archived is 'Stored.';
comment on column bi_pdf_archive.gone is 'The survey response does not exist (404): not tried again.';
comment on column bi_pdf_archive.total is 'All survey responses in the archive queue.';
comment on column bi_pdf_archive.oldest_waiting_since is 'When the longest-waiting one was queued.';
comment on column bi_pdf_archive.next_attempt_at is 'When the next due one will be tried.';
comment on column bi_pdf_archive.archived_bytes is 'Bytes of the archived PDFs, per survey response.';
comment on column bi_pdf_archive.stored_files is 'Files stored (identical PDFs once).';
comment on column bi_pdf_archive.stored_bytes is 'Bytes stored (identical PDFs once).';
comment on column bi_pdf_archive.last_archived_at is 'When the latest one was archived.';

grant select on bi_pdf_archive to ddsync_reader;
