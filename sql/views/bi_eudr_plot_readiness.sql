-- Two branches, the same columns and joins, that differ in where a plot's supplier ids come from:
-- plot_supplier_ids (0035: its live links as one sorted array, kept by triggers) for a plot that has a
-- row there, none for one that has not (own plots); as in bi_current_plots, so that a filter
-- `'<id>' = any(supplier_business_ids)` is tested on plot_supplier_ids' rows before any plot is looked
-- up, and is false in the second branch, which then reads nothing (docs/analyst-views.md).
-- The plot's current findings are looked up per plot (not every plot's aggregated first): a filter on
-- the plots and a limit read only those of the plots they return.
create view bi_eudr_plot_readiness as
select
  p.id as plot_id,
  p.name as plot_name,
  l.supplier_ids as supplier_business_ids,
  p.country_code,
  p.commodities,
  coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as area_ha,
  p.content_hash <> '' and coalesce(f.blocking_findings, 0) = 0 as ready,
  (coalesce(f.blocking_findings, 0) + case when p.content_hash = '' then 1 else 0 end)::int as blocking_findings,
  coalesce(f.warning_findings, 0)::int as warning_findings,
  case when p.content_hash = '' then array['not_checked'] || coalesce(f.blocking_codes, '{}')
       else coalesce(f.blocking_codes, '{}') end as blocking_codes,
  case when p.content_hash = ''
       then jsonb_build_array(jsonb_build_object('code', 'not_checked', 'severity', 'blocking', 'message',
              'Not checked yet: stored before the readiness checks applied to it; the next refresh checks it.'))
            || coalesce(f.findings, '[]'::jsonb)
       else coalesce(f.findings, '[]'::jsonb) end as findings,
  eudr_overlap_checked() as overlap_checked,
  p.content_hash <> '' as checked,
  case when nullif(btrim(p.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from plot_supplier_ids l
join plots p on p.id = l.plot_id
left join lateral (
  select count(*) filter (where e.severity = 'blocking') as blocking_findings,
         count(*) filter (where e.severity = 'warning') as warning_findings,
         array_agg(e.code order by e.code) filter (where e.severity = 'blocking') as blocking_codes,
         jsonb_agg(jsonb_build_object('code', e.code, 'severity', e.severity, 'message', e.message)
                   order by case e.severity when 'blocking' then 0 when 'warning' then 1 else 2 end, e.code) as findings
  from eudr_findings e
  where e.plot_id = p.id and e.is_current
  having count(*) > 0
) f on true
-- The level in force today of its country, as bi_country_risk has it (the row with the latest applies_from
-- not after today), looked up by the key of country_risk for this plot alone.
left join lateral (
  select r.level from country_risk r
  where r.country_code = upper(btrim(p.country_code)) and r.applies_from <= current_date
  order by r.applies_from desc limit 1
) cr on true
where p.deleted_at is null
union all
select
  p.id as plot_id,
  p.name as plot_name,
  l.supplier_ids as supplier_business_ids,
  p.country_code,
  p.commodities,
  coalesce(p.area_ha, p.surface_area_m2 / 10000.0) as area_ha,
  p.content_hash <> '' and coalesce(f.blocking_findings, 0) = 0 as ready,
  (coalesce(f.blocking_findings, 0) + case when p.content_hash = '' then 1 else 0 end)::int as blocking_findings,
  coalesce(f.warning_findings, 0)::int as warning_findings,
  case when p.content_hash = '' then array['not_checked'] || coalesce(f.blocking_codes, '{}')
       else coalesce(f.blocking_codes, '{}') end as blocking_codes,
  case when p.content_hash = ''
       then jsonb_build_array(jsonb_build_object('code', 'not_checked', 'severity', 'blocking', 'message',
              'Not checked yet: stored before the readiness checks applied to it; the next refresh checks it.'))
            || coalesce(f.findings, '[]'::jsonb)
       else coalesce(f.findings, '[]'::jsonb) end as findings,
  eudr_overlap_checked() as overlap_checked,
  p.content_hash <> '' as checked,
  case when nullif(btrim(p.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from plots p
cross join (select '{}'::text[] as supplier_ids) l
left join lateral (
  select count(*) filter (where e.severity = 'blocking') as blocking_findings,
         count(*) filter (where e.severity = 'warning') as warning_findings,
         array_agg(e.code order by e.code) filter (where e.severity = 'blocking') as blocking_codes,
         jsonb_agg(jsonb_build_object('code', e.code, 'severity', e.severity, 'message', e.message)
                   order by case e.severity when 'blocking' then 0 when 'warning' then 1 else 2 end, e.code) as findings
  from eudr_findings e
  where e.plot_id = p.id and e.is_current
  having count(*) > 0
) f on true
-- The level in force today of its country, as bi_country_risk has it (the row with the latest applies_from
-- not after today), looked up by the key of country_risk for this plot alone.
left join lateral (
  select r.level from country_risk r
  where r.country_code = upper(btrim(p.country_code)) and r.applies_from <= current_date
  order by r.applies_from desc limit 1
) cr on true
where p.deleted_at is null
  and not exists (select 1 from plot_supplier_ids x where x.plot_id = p.id);

comment on view bi_eudr_plot_readiness is 'One row per current plot (not soft-deleted): whether it would hold up in an EUDR due-diligence statement as far as the data can tell (ready: checked, and no current blocking finding), and its current findings (docs/eudr-readiness.md). overlap_checked says whether the spatial overlap checks ran (PostGIS only): when false, ready says nothing about land claimed twice.';
comment on column bi_eudr_plot_readiness.plot_id is 'The plot''s id at the service (plots.id).';
comment on column bi_eudr_plot_readiness.plot_name is 'The plot''s name.';
comment on column bi_eudr_plot_readiness.supplier_business_ids is 'Business ids of the direct suppliers through which the plot is reached (live links), sorted; empty for own plots.';
comment on column bi_eudr_plot_readiness.country_code is 'Country of production (ISO 3166 alpha-2) as the service sent it; null when missing (a blocking finding).';
comment on column bi_eudr_plot_readiness.commodities is 'Commodities of the plot, as sent.';
comment on column bi_eudr_plot_readiness.area_ha is 'Hectares: the polygon''s area (plots.area_ha), or for a plot given as a point the reported surface area; null when neither is known. Summable.';
comment on column bi_eudr_plot_readiness.ready is 'true when the readiness checks have seen the plot (checked) and it has no current blocking finding.';
comment on column bi_eudr_plot_readiness.blocking_findings is 'Current blocking findings of the plot, not_checked included.';
comment on column bi_eudr_plot_readiness.warning_findings is 'Current warnings of the plot (they do not make it not ready).';
comment on column bi_eudr_plot_readiness.blocking_codes is 'Codes of the current blocking findings, sorted; not_checked first when the checks have not seen the plot yet.';
comment on column bi_eudr_plot_readiness.findings is 'Current findings as a JSON array of {code, severity, message}: not_checked first when the checks have not seen the plot yet, then blocking, warnings, info; each by code.';
comment on column bi_eudr_plot_readiness.overlap_checked is 'Whether the overlap checks ran in this warehouse (eudr_overlap_checked(): false without PostGIS).';
comment on column bi_eudr_plot_readiness.checked is 'false while the plot waits for the next refresh to check it (stored before the readiness checks, or before a change of them); such a plot is not ready and has the blocking finding not_checked.';
comment on column bi_eudr_plot_readiness.country_risk_level is 'Risk level in force today of the plot''s country of production (country_code, trimmed, upper case) under the Commission''s benchmarking (bi_country_risk): low, standard or high; unknown when the code is not settled by the stored sources (a territory, VA, TW, EH) or is not an ISO code at all; null when the plot has no country.';

grant select on bi_eudr_plot_readiness to ddsync_reader;
