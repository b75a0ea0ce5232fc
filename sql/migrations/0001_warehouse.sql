-- The warehouse: typed tables mirroring the service, history, and the bookkeeping of sync runs.
-- Ids are text: the contract calls them strings, UUID-formatted where stated; text never rejects one.
-- Data tables are written only when content changes (content_hash), so a refresh that finds nothing
-- new writes nothing to them. When a row was last seen is derived from the runs (see sync_last_seen
-- in 0002), not rewritten on every row at every run.

-- ── Run bookkeeping ─────────────────────────────────────────────────────────────────────────────

create table sync_runs (
  id uuid primary key,
  kind text not null default 'refresh',
  workflow_id text,
  status text not null default 'running' check (status in ('running', 'succeeded', 'partial', 'failed')),
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  suppliers_total integer,
  suppliers_done integer not null default 0,
  suppliers_failed integer not null default 0,
  -- Sum of the connections' plotsCount when the run listed its suppliers: what progress is measured against.
  plots_expected bigint,
  pages integer not null default 0,
  plots_seen bigint not null default 0,
  requests bigint not null default 0,
  retries bigint not null default 0,
  rate_limited bigint not null default 0,
  error text
);
comment on table sync_runs is 'One row per warehouse refresh: when, how it ended, pages, plots, requests, retries and 429s.';

-- Rows inserted / updated / unchanged / soft-deleted, per run and table.
create table sync_run_counts (
  run_id uuid not null references sync_runs (id) on delete cascade,
  table_name text not null,
  inserted bigint not null default 0,
  updated bigint not null default 0,
  unchanged bigint not null default 0,
  deleted bigint not null default 0,
  primary key (run_id, table_name)
);
comment on table sync_run_counts is 'Per run and table: rows inserted, updated (changed), unchanged (seen, not rewritten) and soft-deleted.';

-- One row per part of a run: each supplier (kind supplier, scope = the supplier's business id), the
-- business's own plots (scope own-plots), the business network (scope network) and the received
-- invitations (scope invitations). Only a part that succeeded is swept.
create table sync_run_scopes (
  run_id uuid not null references sync_runs (id) on delete cascade,
  scope text not null,
  kind text not null check (kind in ('supplier', 'own_plots', 'network', 'invitations')),
  supplier_id text,
  status text not null default 'pending' check (status in ('pending', 'running', 'succeeded', 'failed')),
  started_at timestamptz,
  finished_at timestamptz,
  plots_expected bigint,
  pages integer not null default 0,
  plots_seen bigint not null default 0,
  requests bigint not null default 0,
  retries bigint not null default 0,
  rate_limited bigint not null default 0,
  error text,
  primary key (run_id, scope)
);
create index sync_run_scopes_last_success on sync_run_scopes (scope, finished_at) where status = 'succeeded';
comment on table sync_run_scopes is 'Per run: one row per supplier (kind supplier), the own plots and the network listing, with status, pages, plots and errors.';

-- Working set of a running refresh: what each page saw, so the sweep can soft-delete what was not
-- seen. One row per page (not per record), keyed so a replayed page overwrites itself; removed when
-- the run finishes.
create table sync_pages (
  run_id uuid not null references sync_runs (id) on delete cascade,
  scope text not null,
  -- The table whose ids the page saw: plots, businesses, business_connections, business_invitations.
  entity text not null,
  page integer not null,
  ids text[] not null,
  received integer not null,
  counts jsonb not null,
  -- The page's text was the same as at the last complete read (source_pages): nothing was parsed.
  reused boolean not null default false,
  requests integer not null default 0,
  retries integer not null default 0,
  rate_limited integer not null default 0,
  written_at timestamptz not null default now(),
  primary key (run_id, scope, entity, page)
);

-- The last complete read of each page of each supplier: a hash of its text, its plot ids and how many
-- records it held, written with the page's rows. A page whose text is the same at the next refresh is
-- known to be in the warehouse already: it is neither parsed nor written again. A supplier's pages are
-- forgotten whenever the sweep soft-deletes links of that supplier or the supplier was not swept (its
-- read failed), so that its next read is complete and swept.
create table source_pages (
  scope text not null,
  page integer not null,
  content_hash text not null,
  ids text[] not null,
  received integer not null,
  read_at timestamptz not null default now(),
  primary key (scope, page)
);

-- Records the service sent that could not be stored as they were, with the field and the rule:
-- `skipped` (left out of the page) or `nulled` (stored, that value set to null).
create table sync_issues (
  run_id uuid not null references sync_runs (id) on delete cascade,
  scope text not null,
  entity text not null,
  record_id text,
  -- Where the record was: page and position, e.g. "page 3 #17".
  location text not null,
  field text not null,
  rule text not null,
  action text not null check (action in ('skipped', 'nulled')),
  seen_at timestamptz not null default now()
);
create index sync_issues_run on sync_issues (run_id);
-- A replayed page must not report the same issue twice.
create unique index sync_issues_once on sync_issues (run_id, scope, entity, location, field);

-- ── Mirrored data ───────────────────────────────────────────────────────────────────────────────

create table businesses (
  id text primary key,
  name text,
  email text,
  username text,
  address_street text,
  address_zip text,
  address_postcode text,
  address_area text,
  address_city text,
  address_country_code text,
  address_country text,
  address_line1 text,
  address_line2 text,
  eori text,
  vat text,
  system_environment text,
  initial_locale text,
  units text,
  created_at timestamptz,
  updated_at timestamptz,
  is_caller boolean not null default false,
  content_hash text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz
);
comment on table businesses is 'The calling business, its suppliers and buyers, from the connection listings.';

create table business_connections (
  id text primary key,
  source_business_id text not null,
  target_business_id text not null,
  -- The side that is not the calling business; `role` says whether it supplies or buys.
  partner_business_id text not null,
  role text not null check (role in ('supplier', 'buyer')),
  plots_count integer,
  plots_commodities text[] not null default '{}',
  custom_data jsonb,
  created_at timestamptz,
  updated_at timestamptz,
  content_hash text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index business_connections_partner on business_connections (partner_business_id);

create table plots (
  id text primary key,
  owner_id text,
  name text,
  description text,
  country_code text,
  commodities text[] not null default '{}',
  -- As reported by the service (m²), and computed from the polygon with @turf/area (ha).
  surface_area_m2 double precision,
  area_ha double precision,
  bbox_min_lon double precision,
  bbox_min_lat double precision,
  bbox_max_lon double precision,
  bbox_max_lat double precision,
  geometry jsonb,
  geometry_valid boolean not null,
  geometry_issue text,
  risk_assessment_status text,
  risk_level text,
  production_date_start date,
  production_date_end date,
  filename text,
  custom_data jsonb,
  most_recent_analysis_id text,
  euforobs_analysis_id text,
  precision_analysis_id text,
  is_own boolean not null default false,
  created_at timestamptz,
  updated_at timestamptz,
  content_hash text not null,
  history_hash text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index plots_own on plots (id) where is_own and deleted_at is null;
comment on table plots is 'Every plot reachable through a supplier, and the business''s own plots: one row per plot however many suppliers reach it.';
comment on column plots.surface_area_m2 is 'surfaceArea as reported by the service, in square metres.';
comment on column plots.area_ha is 'Area of the polygon computed with @turf/area, in hectares.';
comment on column plots.geometry is 'GeoJSON Polygon or MultiPolygon, [longitude, latitude], WGS84, as the service sent it.';
comment on column plots.geometry_valid is 'false when the polygon is invalid (see geometry_issue); such plots are stored and flagged, never dropped.';

-- A plot reachable through several suppliers is one plot and several links. Own plots have no link.
-- plot_id refers to plots.id; no foreign key is declared because each key check locks the plot row
-- (a write on every link insert) and the refresh writes a link only with its plot, in one transaction.
create table plot_suppliers (
  plot_id text not null,
  supplier_id text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz,
  primary key (plot_id, supplier_id)
);
create index plot_suppliers_live on plot_suppliers (supplier_id, plot_id) where deleted_at is null;

-- plot_id refers to plots.id (no foreign key, as for plot_suppliers).
create table plot_species (
  plot_id text not null,
  position smallint not null,
  scientific_name text,
  common_name text,
  primary key (plot_id, position)
);
comment on table plot_species is 'Species of a plot as last seen; replaced whenever the plot changes.';

-- Every analysis once, both types; the plot's most recent (overall and per type) is marked.
create table analyses (
  id text primary key,
  plot_id text not null,
  type text,
  status text,
  name text,
  version text,
  analysed_at timestamptz,
  deforested_area_m2 double precision,
  deforested_geometry jsonb,
  risk_of_deforestation double precision,
  custom_data jsonb,
  created_at timestamptz,
  updated_at timestamptz,
  is_most_recent boolean not null default false,
  is_most_recent_of_type boolean not null default false,
  content_hash text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index analyses_plot on analyses (plot_id);
comment on table analyses is 'Every analysis seen, EUFOROBS and PRECISION; older ones stay when a newer one becomes the most recent.';

-- SCD type 2 over the tracked attributes of a plot.
create table plot_history (
  plot_id text not null,
  valid_from timestamptz not null,
  valid_to timestamptz,
  is_current boolean not null default true,
  risk_assessment_status text,
  risk_level text,
  geometry_hash text,
  commodities text[] not null default '{}',
  most_recent_analysis_id text,
  euforobs_analysis_id text,
  precision_analysis_id text,
  history_hash text not null,
  run_id uuid,
  primary key (plot_id, valid_from)
);
create unique index plot_history_current on plot_history (plot_id) where is_current;
comment on table plot_history is 'One row per version of a plot''s tracked attributes (risk status, risk level, geometry, commodities, most recent analyses): valid_from, valid_to, is_current.';

create table business_invitations (
  id text primary key,
  status text,
  email text,
  sender_business_id text,
  business_id text,
  source_is_invitee boolean,
  custom_data jsonb,
  created_at timestamptz,
  updated_at timestamptz,
  content_hash text not null,
  first_seen_at timestamptz not null default now(),
  changed_at timestamptz not null default now(),
  deleted_at timestamptz
);
comment on table business_invitations is 'Business invitations received by the calling business.';
