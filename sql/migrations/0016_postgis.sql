-- Spatial columns where the warehouse has PostGIS (docs/postgis.md). This migration works on a
-- PostgreSQL without PostGIS (embedded Postgres, the default) and with it: what needs PostGIS is
-- made by ddsync_spatial_setup(), which decides the mode from the warehouse as it is, and which
-- ddsync runs again after migrating (warehouse/spatial/ensure.ts), so a warehouse that gains
-- PostGIS later gets the same columns, filled.

-- ── The mode, a one-row fact ────────────────────────────────────────────────────────────────────
create table spatial_state (
  id boolean primary key default true check (id),
  mode text not null check (mode in ('postgis', 'none')),
  postgis_version text,
  reason text,
  decided_at timestamptz not null default now(),
  overlaps_checked_at timestamptz,
  overlaps_run_id uuid,
  overlaps_seconds double precision,
  overlaps_error text
);
comment on table spatial_state is 'One row: whether this warehouse has PostGIS (mode postgis: plots.geom, analyses.deforested_geom and the overlap checks) or not (mode none: GeoJSON only, reason says why), and when the overlap checks last ran (docs/postgis.md).';
comment on column spatial_state.id is 'Always true: the table holds one row.';
comment on column spatial_state.mode is 'postgis: spatial columns kept in step with the GeoJSON and overlap checks run at the end of each refresh that changed plots; none: GeoJSON only, no overlap check.';
comment on column spatial_state.postgis_version is 'The installed PostGIS extension version (mode postgis), else null.';
comment on column spatial_state.reason is 'Why the mode is none (PostGIS not available on the server, or the role may not create the extension); null in mode postgis.';
comment on column spatial_state.decided_at is 'When the mode was last decided (at migrate time, each time a worker or ddsync migrate starts).';
comment on column spatial_state.overlaps_checked_at is 'When the overlap checks (overlap_same_supplier, overlap_other_supplier in eudr_findings) last completed over the current plots; null when they have not run (mode none, PostGIS just enabled, or the last attempt failed).';
comment on column spatial_state.overlaps_run_id is 'The refresh whose end ran the overlap checks last (sync_runs.id).';
comment on column spatial_state.overlaps_seconds is 'How long the last overlap check took, in seconds.';
comment on column spatial_state.overlaps_error is 'Why the last overlap check failed (it is tried again at the end of the next refresh); null when it succeeded.';

-- Whether the overlap checks ran over the current plots: PostGIS on and the check completed since
-- (replaces 0015's constant false; bi_eudr_plot_readiness.overlap_checked reads it).
create or replace function eudr_overlap_checked() returns boolean
language sql stable parallel safe
as $$ select coalesce((select s.mode = 'postgis' and s.overlaps_checked_at is not null from spatial_state s), false) $$;
comment on function eudr_overlap_checked() is 'Whether the warehouse ran the overlap checks (overlap_same_supplier, overlap_other_supplier) over the current plots: true with PostGIS once a refresh ended with the check (spatial_state); false without PostGIS, in which case no plot is found overlapping because none was compared.';

-- ── The setup, idempotent ───────────────────────────────────────────────────────────────────────
-- Everything naming a PostGIS type or function is run with EXECUTE, so this function is created,
-- and runs, on a server without PostGIS. Returns the mode as JSON: {mode, version, reason, made}
-- where made lists what this call created (empty on a warehouse already set up: then it takes no
-- lock on plots or analyses, so a worker starting during a refresh does not wait for it).
create or replace function ddsync_spatial_setup() returns jsonb
language plpgsql
as $setup$
declare
  version text;
  reason text;
  ext_schema text;
  made text[] := '{}';
  filled bigint;
begin
  -- Two workers starting at once: one sets up, the other finds it done.
  perform pg_advisory_xact_lock(hashtext('ddsync_spatial_setup'));
  select e.extversion into version from pg_extension e where e.extname = 'postgis';
  if version is null then
    if not exists (select 1 from pg_available_extensions a where a.name = 'postgis') then
      reason := 'the postgis extension is not installed on this PostgreSQL server';
    else
      begin
        create extension if not exists postgis;
        select e.extversion into version from pg_extension e where e.extname = 'postgis';
        made := made || 'extension postgis'::text;
      exception when others then
        reason := format('role %s may not create the postgis extension (%s); a superuser can: create extension postgis',
                         current_user, sqlerrm);
      end;
    end if;
  end if;

  if version is null then
    insert into spatial_state (mode, postgis_version, reason, decided_at, overlaps_checked_at)
    values ('none', null, reason, now(), null)
    on conflict (id) do update set mode = 'none', postgis_version = null, reason = excluded.reason,
      decided_at = now(), overlaps_checked_at = null;
    return jsonb_build_object('mode', 'none', 'version', null, 'reason', reason, 'made', to_jsonb(made));
  end if;

  select n.nspname into ext_schema
  from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'postgis';

  -- GeoJSON → geometry, or null with the reason: never an error (a refresh must not fail on a shape).
  if to_regprocedure('spatial_geom_of(jsonb)') is null then
    execute format($f$
      create function spatial_geom_of(doc jsonb, out geom %1$I.geometry, out issue text)
      language plpgsql immutable parallel safe
      set search_path = %1$I, pg_catalog
      as $body$
      declare
        g geometry;
        v record;
      begin
        if doc is null or jsonb_typeof(doc) <> 'object' or doc = '{}'::jsonb then
          return;
        end if;
        begin
          g := ST_GeomFromGeoJSON(doc::text);
        exception when others then
          issue := 'not readable as GeoJSON: ' || sqlerrm;
          return;
        end;
        if g is null or ST_IsEmpty(g) then
          issue := 'empty geometry';
          return;
        end if;
        if ST_XMin(g) < -180 or ST_XMax(g) > 180 or ST_YMin(g) < -90 or ST_YMax(g) > 90 then
          issue := 'coordinates outside the WGS84 range (longitude -180..180, latitude -90..90)';
          return;
        end if;
        -- ST_IsValidDetail rather than ST_IsValid: the same answer without a NOTICE per bad shape.
        select * into v from ST_IsValidDetail(g);
        if not v.valid then
          issue := 'invalid geometry: ' || coalesce(v.reason, 'unknown reason')
                   || coalesce(' at ' || ST_AsText(v.location), '');
          return;
        end if;
        geom := ST_SetSRID(g, 4326);
      exception when others then
        geom := null;
        issue := 'could not be checked: ' || sqlerrm;
      end
      $body$$f$, ext_schema);
    execute $c$comment on function spatial_geom_of(jsonb) is 'A GeoJSON geometry as a PostGIS geometry (SRID 4326), or a null geometry and the reason it is unusable (unreadable, empty, outside the WGS84 range, invalid); never raises, so a bad shape never fails a write.'$c$;
    made := made || 'function spatial_geom_of'::text;
  end if;

  -- Plots: geom and geom_issue kept in step with plots.geometry.
  if not exists (select 1 from pg_attribute where attrelid = 'plots'::regclass and attname = 'geom' and not attisdropped) then
    execute format('alter table plots add column geom %I.geometry(Geometry, 4326), add column geom_issue text', ext_schema);
    execute $c$comment on column plots.geom is 'The plot''s geometry as PostGIS geometry (SRID 4326, WGS84), kept in step with plots.geometry by a trigger; null when there is no geometry or it is unusable (geom_issue says why). Only where the warehouse has PostGIS (docs/postgis.md).'$c$;
    execute $c$comment on column plots.geom_issue is 'Why plots.geom is null although the plot has a GeoJSON geometry (unreadable, outside the WGS84 range, invalid with PostGIS''s reason and location); null when geom is set or there is no geometry.'$c$;
    made := made || 'column plots.geom'::text;
  end if;
  if to_regclass('plots_geom') is null then
    execute format('create index plots_geom on plots using gist (geom %I.gist_geometry_ops_2d)', ext_schema);
    made := made || 'index plots_geom'::text;
  end if;
  if to_regprocedure('plots_geom_sync()') is null then
    execute $f$
      create function plots_geom_sync() returns trigger language plpgsql as $body$
      begin
        if tg_op = 'INSERT' or new.geometry is distinct from old.geometry then
          select g.geom, g.issue into new.geom, new.geom_issue from spatial_geom_of(new.geometry) g;
        end if;
        return new;
      end
      $body$$f$;
    made := made || 'function plots_geom_sync'::text;
  end if;
  if not exists (select 1 from pg_trigger where tgrelid = 'plots'::regclass and tgname = 'plots_geom_sync') then
    execute 'create trigger plots_geom_sync before insert or update of geometry on plots for each row execute function plots_geom_sync()';
    made := made || 'trigger plots_geom_sync'::text;
  end if;

  -- Analyses: the deforested area's geometry.
  if not exists (select 1 from pg_attribute where attrelid = 'analyses'::regclass and attname = 'deforested_geom' and not attisdropped) then
    execute format('alter table analyses add column deforested_geom %I.geometry(Geometry, 4326), add column deforested_geom_issue text', ext_schema);
    execute $c$comment on column analyses.deforested_geom is 'The deforested area as PostGIS geometry (SRID 4326), kept in step with analyses.deforested_geometry by a trigger; null when the analysis reports none or the shape is unusable (deforested_geom_issue says why). Only where the warehouse has PostGIS (docs/postgis.md).'$c$;
    execute $c$comment on column analyses.deforested_geom_issue is 'Why analyses.deforested_geom is null although a deforested geometry was sent (unreadable, outside the WGS84 range, invalid); null otherwise.'$c$;
    made := made || 'column analyses.deforested_geom'::text;
  end if;
  if to_regclass('analyses_deforested_geom') is null then
    execute format('create index analyses_deforested_geom on analyses using gist (deforested_geom %I.gist_geometry_ops_2d)', ext_schema);
    made := made || 'index analyses_deforested_geom'::text;
  end if;
  if to_regprocedure('analyses_geom_sync()') is null then
    execute $f$
      create function analyses_geom_sync() returns trigger language plpgsql as $body$
      begin
        if tg_op = 'INSERT' or new.deforested_geometry is distinct from old.deforested_geometry then
          select g.geom, g.issue into new.deforested_geom, new.deforested_geom_issue
          from spatial_geom_of(new.deforested_geometry) g;
        end if;
        return new;
      end
      $body$$f$;
    made := made || 'function analyses_geom_sync'::text;
  end if;
  if not exists (select 1 from pg_trigger where tgrelid = 'analyses'::regclass and tgname = 'analyses_geom_sync') then
    execute 'create trigger analyses_geom_sync before insert or update of deforested_geometry on analyses for each row execute function analyses_geom_sync()';
    made := made || 'trigger analyses_geom_sync'::text;
  end if;

  -- Rows written before the trigger existed (PostGIS added after the data): filled once, here.
  if cardinality(made) > 0 then
    execute $u$
      update plots p set geom = g.geom, geom_issue = g.issue
      from plots q cross join lateral spatial_geom_of(q.geometry) g
      where p.id = q.id and q.geom is null and q.geom_issue is null
        and jsonb_typeof(q.geometry) = 'object' and q.geometry <> '{}'::jsonb$u$;
    get diagnostics filled = row_count;
    if filled > 0 then made := made || format('geom of %s plots', filled); end if;
    execute $u$
      update analyses a set deforested_geom = g.geom, deforested_geom_issue = g.issue
      from analyses b cross join lateral spatial_geom_of(b.deforested_geometry) g
      where a.id = b.id and b.deforested_geom is null and b.deforested_geom_issue is null
        and jsonb_typeof(b.deforested_geometry) = 'object' and b.deforested_geometry <> '{}'::jsonb$u$;
    get diagnostics filled = row_count;
    if filled > 0 then made := made || format('deforested_geom of %s analyses', filled); end if;
  end if;

  insert into spatial_state (mode, postgis_version, reason, decided_at, overlaps_checked_at)
  values ('postgis', version, null, now(), null)
  on conflict (id) do update set mode = 'postgis', postgis_version = excluded.postgis_version, reason = null,
    decided_at = now(),
    -- Geometries just filled (or PostGIS just enabled) were never compared: the next refresh does it.
    overlaps_checked_at = case when cardinality(made) > 0 or spatial_state.mode <> 'postgis' then null
                               else spatial_state.overlaps_checked_at end;
  return jsonb_build_object('mode', 'postgis', 'version', version, 'reason', null, 'made', to_jsonb(made));
end
$setup$;
comment on function ddsync_spatial_setup() is 'Decides the spatial mode from the warehouse as it is (PostGIS installed, or available and creatable by this role) and, with PostGIS, makes what is missing of plots.geom, analyses.deforested_geom, their GiST indexes and triggers, and fills them; records the mode in spatial_state. Idempotent; run by this migration and after every migrate (docs/postgis.md).';

select ddsync_spatial_setup();
