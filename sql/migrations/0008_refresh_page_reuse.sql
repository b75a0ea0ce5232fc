-- What 0001_warehouse.sql gained after it was first released (page reuse by text hash, links and
-- species without foreign keys), for warehouses migrated before then. Idempotent: a warehouse created
-- since already has all of it, and this changes nothing there.
alter table sync_pages add column if not exists reused boolean not null default false;

create table if not exists source_pages (
  scope text not null,
  page integer not null,
  content_hash text not null,
  ids text[] not null,
  received integer not null,
  read_at timestamptz not null default now(),
  primary key (scope, page)
);

alter table plot_suppliers drop constraint if exists plot_suppliers_plot_id_fkey;
alter table plot_species drop constraint if exists plot_species_plot_id_fkey;

grant select on all tables in schema public to ddsync_reader;
