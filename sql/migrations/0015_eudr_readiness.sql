-- EUDR geolocation readiness (docs/eudr-readiness.md): what the refresh finds wrong with each plot
-- for a due-diligence statement under Regulation (EU) 2023/1115, kept with history like
-- plot_history, and two views that answer "which of my suppliers' plots would hold up, and which
-- need fixing first?".

-- ── Findings, SCD type 2 ────────────────────────────────────────────────────────────────────────
-- Per-record findings are written by the refresh with the plot (new or changed plots only, in the
-- page's transaction); codes starting with overlap_ are computed across plots in SQL where the
-- warehouse has PostGIS. plot_id refers to plots.id (no foreign key, as for plot_suppliers).
create table eudr_findings (
  plot_id text not null,
  code text not null,
  severity text not null check (severity in ('blocking', 'warning', 'info')),
  message text not null,
  details jsonb,
  valid_from timestamptz not null,
  valid_to timestamptz,
  is_current boolean not null default true,
  run_id uuid,
  primary key (plot_id, code, valid_from)
);
create unique index eudr_findings_current on eudr_findings (plot_id, code) where is_current;
comment on table eudr_findings is 'One row per version of a finding of an EUDR readiness check on a plot (docs/eudr-readiness.md), SCD type 2: when a plot''s findings change, the changed or removed ones are closed (valid_to, is_current false) and the new or changed ones opened. Current findings: where is_current.';
comment on column eudr_findings.plot_id is 'The plot (plots.id).';
comment on column eudr_findings.code is 'Stable code of the check, e.g. polygon_self_intersection, point_over_4_ha, production_before_cutoff; codes starting with overlap_ come from the spatial check (PostGIS only).';
comment on column eudr_findings.severity is 'blocking: the plot cannot go into a due-diligence statement as it is; warning: it may, but needs an explanation or a look; info: worth knowing.';
comment on column eudr_findings.message is 'One human sentence saying what is wrong, with the figures that matter.';
comment on column eudr_findings.details is 'The numbers behind the finding (areas, tolerance, positions, dates, other plot ids), as JSON.';
comment on column eudr_findings.valid_from is 'When this version of the finding was first found.';
comment on column eudr_findings.valid_to is 'When it stopped holding (the plot changed, was fixed or removed); null while current.';
comment on column eudr_findings.is_current is 'true for the finding as it holds now (at most one per plot and code).';
comment on column eudr_findings.run_id is 'The refresh that found it (sync_runs.id).';

-- Whether the spatial checks (overlap_*) ran: they need PostGIS, which this migration does not
-- assume. Migration 0016 replaces this function where PostGIS is available.
create or replace function eudr_overlap_checked() returns boolean
language sql stable parallel safe
as $$ select false $$;
comment on function eudr_overlap_checked() is 'Whether the warehouse ran the overlap checks (overlap_same_supplier, overlap_other_supplier): false without PostGIS, in which case no plot is found overlapping because none was compared.';

-- ── Views ───────────────────────────────────────────────────────────────────────────────────────
-- A plot's hectares: the polygon's area, or for a plot given as a point (which has none) the area
-- the service reports. Ready: no current blocking finding.
create view bi_eudr_plot_readiness as
select
  p.id as plot_id,
  p.name as plot_name,
  coalesce(l.supplier_business_ids, '{}') as supplier_business_ids,
  p.country_code,
  p.commodities,
  coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as area_ha,
  coalesce(f.blocking_findings, 0) = 0 as ready,
  coalesce(f.blocking_findings, 0)::int as blocking_findings,
  coalesce(f.warning_findings, 0)::int as warning_findings,
  coalesce(f.blocking_codes, '{}') as blocking_codes,
  coalesce(f.findings, '[]'::jsonb) as findings,
  eudr_overlap_checked() as overlap_checked
from plots p
left join (
  select ps.plot_id, array_agg(ps.supplier_id order by ps.supplier_id) as supplier_business_ids
  from plot_suppliers ps
  where ps.deleted_at is null
  group by ps.plot_id
) l on l.plot_id = p.id
left join (
  select e.plot_id,
         count(*) filter (where e.severity = 'blocking') as blocking_findings,
         count(*) filter (where e.severity = 'warning') as warning_findings,
         array_agg(e.code order by e.code) filter (where e.severity = 'blocking') as blocking_codes,
         jsonb_agg(jsonb_build_object('code', e.code, 'severity', e.severity, 'message', e.message)
                   order by case e.severity when 'blocking' then 0 when 'warning' then 1 else 2 end, e.code) as findings
  from eudr_findings e
  where e.is_current
  group by e.plot_id
) f on f.plot_id = p.id
where p.deleted_at is null;
comment on view bi_eudr_plot_readiness is 'One row per current plot (not soft-deleted): whether it would hold up in an EUDR due-diligence statement as far as the data can tell (ready: no current blocking finding), and its current findings (docs/eudr-readiness.md). overlap_checked says whether the spatial overlap checks ran (PostGIS only): when false, ready says nothing about land claimed twice.';
comment on column bi_eudr_plot_readiness.plot_id is 'The plot''s id at the service (plots.id).';
comment on column bi_eudr_plot_readiness.plot_name is 'The plot''s name.';
comment on column bi_eudr_plot_readiness.supplier_business_ids is 'Business ids of the direct suppliers through which the plot is reached (live links), sorted; empty for own plots.';
comment on column bi_eudr_plot_readiness.country_code is 'Country of production (ISO 3166 alpha-2) as the service sent it; null when missing (a blocking finding).';
comment on column bi_eudr_plot_readiness.commodities is 'Commodities of the plot, as sent.';
comment on column bi_eudr_plot_readiness.area_ha is 'Hectares: the polygon''s area (plots.area_ha), or for a plot given as a point the reported surface area; null when neither is known. Summable.';
comment on column bi_eudr_plot_readiness.ready is 'true when the plot has no current blocking finding.';
comment on column bi_eudr_plot_readiness.blocking_findings is 'Current blocking findings of the plot.';
comment on column bi_eudr_plot_readiness.warning_findings is 'Current warnings of the plot (they do not make it not ready).';
comment on column bi_eudr_plot_readiness.blocking_codes is 'Codes of the current blocking findings, sorted.';
comment on column bi_eudr_plot_readiness.findings is 'Current findings as a JSON array of {code, severity, message}, blocking first, then warnings, then info; each by code.';
comment on column bi_eudr_plot_readiness.overlap_checked is 'Whether the overlap checks ran in this warehouse (eudr_overlap_checked(): false without PostGIS).';

-- Suppliers: every live supplier connection, and every supplier a live link reaches a plot through.
create view bi_eudr_supplier_readiness as
with supplier as (
  select c.partner_business_id as supplier_business_id
  from business_connections c
  where c.role = 'supplier' and c.deleted_at is null
  union
  select ps.supplier_id from plot_suppliers ps where ps.deleted_at is null
),
linked as not materialized (
  select ps.supplier_id, r.*
  from plot_suppliers ps
  join bi_eudr_plot_readiness r on r.plot_id = ps.plot_id
  where ps.deleted_at is null
),
figures as (
  select l.supplier_id,
         count(*) as plots,
         count(*) filter (where l.ready) as plots_ready,
         coalesce(sum(l.area_ha), 0) as hectares,
         coalesce(sum(l.area_ha) filter (where l.ready), 0) as hectares_ready
  from linked l
  group by l.supplier_id
),
reasons as (
  select x.supplier_id,
         jsonb_agg(jsonb_build_object('code', x.code, 'plots', x.plots) order by x.plots desc, x.code) as top_reasons
  from (
    select l.supplier_id, c.code, count(*) as plots,
           row_number() over (partition by l.supplier_id order by count(*) desc, c.code) as rank
    from linked l cross join lateral unnest(l.blocking_codes) as c(code)
    group by l.supplier_id, c.code
  ) x
  where x.rank <= 5
  group by x.supplier_id
)
select
  s.supplier_business_id,
  coalesce(b.name, s.supplier_business_id) as supplier_name,
  coalesce(f.plots, 0)::int as plots,
  coalesce(f.plots_ready, 0)::int as plots_ready,
  (coalesce(f.plots, 0) - coalesce(f.plots_ready, 0))::int as plots_not_ready,
  coalesce(f.hectares, 0)::float8 as hectares,
  coalesce(f.hectares_ready, 0)::float8 as hectares_ready,
  case when coalesce(f.plots, 0) > 0 then f.plots_ready::float8 / f.plots end as share_ready,
  coalesce(r.top_reasons, '[]'::jsonb) as top_reasons
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join reasons r on r.supplier_id = s.supplier_business_id;
comment on view bi_eudr_supplier_readiness is 'One row per direct supplier (live supplier connection, or a live link to a plot): its current plots, how many would hold up in an EUDR due-diligence statement (bi_eudr_plot_readiness.ready), hectares, share ready and the most frequent blocking reasons. A plot reached through two suppliers counts for each: do not add plots or hectares up across suppliers.';
comment on column bi_eudr_supplier_readiness.supplier_business_id is 'The supplier''s business id.';
comment on column bi_eudr_supplier_readiness.supplier_name is 'The supplier''s name (its id when unknown).';
comment on column bi_eudr_supplier_readiness.plots is 'Current plots reached through this supplier (live links).';
comment on column bi_eudr_supplier_readiness.plots_ready is 'Of those, plots without a current blocking finding.';
comment on column bi_eudr_supplier_readiness.plots_not_ready is 'Of those, plots with at least one current blocking finding.';
comment on column bi_eudr_supplier_readiness.hectares is 'Hectares of those plots (bi_eudr_plot_readiness.area_ha).';
comment on column bi_eudr_supplier_readiness.hectares_ready is 'Hectares of the plots that are ready.';
comment on column bi_eudr_supplier_readiness.share_ready is 'plots_ready / plots, 0..1; null for a supplier with no current plot.';
comment on column bi_eudr_supplier_readiness.top_reasons is 'The most frequent blocking codes among the supplier''s plots, as a JSON array of {code, plots} (plots with that code), most frequent first (then by code), at most 5.';

-- ── Plots already in the warehouse get their findings ──────────────────────────────────────────
-- The refresh writes findings with new or changed plots only, and the plots already here are neither.
-- As 0010 did for flagged areas: an empty content hash matches no fingerprint, and forgetting the
-- source pages makes the next refresh parse them, so it rewrites each plot once with its findings
-- (no plot_history row: nothing tracked changed).
update plots set content_hash = '' where deleted_at is null;
delete from source_pages;
