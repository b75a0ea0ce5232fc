-- The geom triggers of 0016 made cheaper (docs/postgis.md, docs/benchmarks.md "PostGIS"): measured
-- as backend CPU per plot inserted with PostGIS 3.3, 0016's trigger cost about 100 µs, mostly
-- spent around the work (ST_GeomFromGeoJSON and ST_IsValidDetail take about 25 µs): a search_path
-- set on spatial_geom_of (each call planned its statements again), two exception blocks, the result
-- read by a query per row, and a plpgsql call for every analysis although most report no
-- deforested area. The answers are the same: geom and geom_issue as 0016 sets them.
--
-- ddsync_spatial_setup() is replaced, so a warehouse that gains PostGIS later gets these bodies; on a
-- warehouse 0016 set up it replaces the functions and triggers (the bodies carry the mark
-- "ddsync 0032") without filling again or clearing the overlap check's result. Works with and
-- without PostGIS, like 0016.

create or replace function ddsync_spatial_setup() returns jsonb
language plpgsql
as $setup$
declare
  version text;
  reason text;
  ext_schema text;
  made text[] := '{}';
  filled bigint;
  upgrading boolean;
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
  -- A warehouse 0016 set up (its geom column there, its functions without 0032's mark): what is
  -- replaced below gives the same geometries, so the overlap check's last result stands.
  upgrading := cardinality(made) = 0
    and exists (select 1 from pg_attribute where attrelid = 'plots'::regclass and attname = 'geom' and not attisdropped)
    and exists (select 1 from pg_attribute where attrelid = 'analyses'::regclass and attname = 'deforested_geom' and not attisdropped)
    and to_regclass('plots_geom') is not null and to_regclass('analyses_deforested_geom') is not null;

  -- GeoJSON → geometry, or null with the reason: never an error (a refresh must not fail on a shape).
  -- 0032: PostGIS names qualified instead of a search_path set per call (which made every call
  -- plan its statements again), one exception block (one subtransaction) instead of two, and the
  -- bounding box computed once. Same answers as 0016's body; replaced where that one is installed.
  if not exists (select 1 from pg_proc where oid = to_regprocedure('spatial_geom_of(jsonb)') and prosrc like '%ddsync 0032%') then
    execute format($f$
      create or replace function spatial_geom_of(doc jsonb, out geom %1$I.geometry, out issue text)
      language plpgsql immutable parallel safe
      as $body$
      -- ddsync 0032
      declare
        g %1$I.geometry;
        b %1$I.box2d;
        v %1$I.valid_detail;
        readable boolean := false;
      begin
        if doc is null or jsonb_typeof(doc) <> 'object' or doc = '{}'::jsonb then
          return;
        end if;
        begin
          g := %1$I.ST_GeomFromGeoJSON(doc::text);
          readable := true;
          if g is null or %1$I.ST_IsEmpty(g) then
            issue := 'empty geometry';
            return;
          end if;
          b := %1$I.Box2D(g);
          if %1$I.ST_XMin(b) < -180 or %1$I.ST_XMax(b) > 180 or %1$I.ST_YMin(b) < -90 or %1$I.ST_YMax(b) > 90 then
            issue := 'coordinates outside the WGS84 range (longitude -180..180, latitude -90..90)';
            return;
          end if;
          -- ST_IsValidDetail rather than ST_IsValid: the same answer without a NOTICE per bad shape.
          v := %1$I.ST_IsValidDetail(g);
          if not v.valid then
            issue := 'invalid geometry: ' || coalesce(v.reason, 'unknown reason')
                     || coalesce(' at ' || %1$I.ST_AsText(v.location), '');
            return;
          end if;
          geom := %1$I.ST_SetSRID(g, 4326);
        exception when others then
          geom := null;
          issue := case when readable then 'could not be checked: ' else 'not readable as GeoJSON: ' end || sqlerrm;
        end;
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
  -- 0032: the result taken as an expression (not a query per row), and the trigger fires only when
  -- there is a shape to read or a geom to clear (its WHEN, evaluated without entering plpgsql).
  if not exists (select 1 from pg_proc where oid = to_regprocedure('plots_geom_sync()') and prosrc like '%ddsync 0032%') then
    execute $f$
      create or replace function plots_geom_sync() returns trigger language plpgsql as $body$
      -- ddsync 0032
      declare
        r record;
      begin
        if tg_op = 'INSERT' or new.geometry is distinct from old.geometry then
          r := spatial_geom_of(new.geometry);
          new.geom := r.geom;
          new.geom_issue := r.issue;
        end if;
        return new;
      end
      $body$$f$;
    made := made || 'function plots_geom_sync'::text;
  end if;
  if not exists (select 1 from pg_trigger where tgrelid = 'plots'::regclass and tgname = 'plots_geom_sync' and tgqual is not null) then
    execute 'drop trigger if exists plots_geom_sync on plots';
    -- Not fired for a row with no shape and nothing to clear: geom and geom_issue stay null.
    execute $t$
      create trigger plots_geom_sync before insert or update of geometry on plots for each row
      when ((jsonb_typeof(new.geometry) = 'object' and new.geometry <> '{}'::jsonb)
            or new.geom is not null or new.geom_issue is not null)
      execute function plots_geom_sync()$t$;
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
  if not exists (select 1 from pg_proc where oid = to_regprocedure('analyses_geom_sync()') and prosrc like '%ddsync 0032%') then
    execute $f$
      create or replace function analyses_geom_sync() returns trigger language plpgsql as $body$
      -- ddsync 0032
      declare
        r record;
      begin
        if tg_op = 'INSERT' or new.deforested_geometry is distinct from old.deforested_geometry then
          r := spatial_geom_of(new.deforested_geometry);
          new.deforested_geom := r.geom;
          new.deforested_geom_issue := r.issue;
        end if;
        return new;
      end
      $body$$f$;
    made := made || 'function analyses_geom_sync'::text;
  end if;
  -- Most analyses report no deforested area ('{}'): their rows no longer enter plpgsql at all.
  if not exists (select 1 from pg_trigger where tgrelid = 'analyses'::regclass and tgname = 'analyses_geom_sync' and tgqual is not null) then
    execute 'drop trigger if exists analyses_geom_sync on analyses';
    execute $t$
      create trigger analyses_geom_sync before insert or update of deforested_geometry on analyses for each row
      when ((jsonb_typeof(new.deforested_geometry) = 'object' and new.deforested_geometry <> '{}'::jsonb)
            or new.deforested_geom is not null or new.deforested_geom_issue is not null)
      execute function analyses_geom_sync()$t$;
    made := made || 'trigger analyses_geom_sync'::text;
  end if;

  -- Rows written before the trigger existed (PostGIS added after the data): filled once, here.
  if cardinality(made) > 0 and not upgrading then
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
    overlaps_checked_at = case when (cardinality(made) > 0 and not upgrading) or spatial_state.mode <> 'postgis' then null
                               else spatial_state.overlaps_checked_at end;
  return jsonb_build_object('mode', 'postgis', 'version', version, 'reason', null, 'made', to_jsonb(made));
end
$setup$;
comment on function ddsync_spatial_setup() is 'Decides the spatial mode from the warehouse as it is (PostGIS installed, or available and creatable by this role) and, with PostGIS, makes what is missing of plots.geom, analyses.deforested_geom, their GiST indexes and triggers, and fills them; records the mode in spatial_state. Idempotent; run by this migration and after every migrate (docs/postgis.md).';

select ddsync_spatial_setup();
