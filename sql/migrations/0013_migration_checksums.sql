-- What each migration was when this warehouse ran it: the sha256 of the file's bytes, recorded by
-- ddsync's migrator (warehouse/migrate.ts) in the transaction that applies it. The migrator refuses
-- to start when a file differs from what was applied here (docs/development.md, "Migrations").
create table migration_checksums (
  name text primary key,
  sha256 text check (sha256 ~ '^[0-9a-f]{64}$'),
  applied_at timestamptz not null default now()
);
comment on table migration_checksums is 'The migrations (sql/migrations) this warehouse ran, each with the sha256 of the file it ran; ddsync refuses to start when a file differs from it.';
comment on column migration_checksums.name is 'The migration, e.g. 0001_warehouse (the file without .sql).';
comment on column migration_checksums.sha256 is 'sha256 of the file''s bytes as applied; null for a migration applied before ddsync recorded them (it may have run an earlier version of the file).';
comment on column migration_checksums.applied_at is 'When it was applied.';

-- The migrations applied before this one: what they ran is not known here. (0001 was edited after its
-- first release; warehouses that ran the first version were brought to its shape by 0008.) The
-- migrator fills in the checksums of those applied in the same run as this one. kysely_migration is
-- the Kysely migrator's own record of what ran.
insert into migration_checksums (name, sha256, applied_at)
select name, null, "timestamp"::timestamptz from kysely_migration
on conflict (name) do nothing;

-- Readable by BI tools, also where another role ran the earlier migrations (default privileges are per role).
grant select on all tables in schema public to ddsync_reader;
