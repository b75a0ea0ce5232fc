-- Country risk (docs/country-risk.md): the Commission's benchmarking of countries under Article 29 of
-- Regulation (EU) 2023/1115, as a reference table the views read, and per plot and per supplier the
-- risk level of the country of production; per supplier whether simplified due diligence (Article 13)
-- is open to it as far as the plots' countries go.
--
-- Each row is one country's level under one act, with the date it applies from: the next review of
-- the list is new rows with a later applies_from, never an edit of these, so what was in force on any
-- day stays answerable. A country the stored sources do not settle is 'unknown', never guessed.
--
-- Source. The official text of Implementing Regulation (EU) 2025/1093 (CELEX 32025R1093) was not among
-- the sources this was built from; the rows come from third-party transcriptions of its Annex, named
-- in each row's source. The ISO codes are those of a public reference module (its version string
-- "EU-2025-1093-annex-2025-05-23"; 140 low, 4 high, 50 standard), whose counts agree with eudr-scope-mcp's
-- reading of the act from CELLAR (140 low, 4 high) and whose first 45 low-risk names agree, in order,
-- with the Annex as Ropes & Gray reproduce it (May 2025).

create table country_risk (
  country_code text not null check (country_code ~ '^[A-Z]{2}$'),
  level text not null check (level in ('low', 'standard', 'high', 'unknown')),
  act text not null,
  act_date date not null,
  applies_from date not null,
  provision text,
  source text not null,
  primary key (country_code, applies_from)
);
comment on table country_risk is 'One row per country (ISO 3166-1 alpha-2) and benchmarking act: the risk level the Commission assigns to it under Article 29 of Regulation (EU) 2023/1115 (low, standard, high), or unknown where the stored sources do not settle it, from the date the act applies. A later review is new rows with a later applies_from; rows are never edited. The level in force today: bi_country_risk. See docs/country-risk.md.';
comment on column country_risk.country_code is 'ISO 3166-1 alpha-2 code, upper case (XK: Kosovo, a user-assigned code).';
comment on column country_risk.level is 'low, standard or high as the act assigns it; unknown when the stored sources do not settle it (territories the act does not name, and VA, TW, EH): never guessed.';
comment on column country_risk.act is 'The act that assigns the level, e.g. Commission Implementing Regulation (EU) 2025/1093.';
comment on column country_risk.act_date is 'The date of the act (its adoption).';
comment on column country_risk.applies_from is 'The date from which this row''s level applies (for 2025/1093, its entry into force: no later application date was found). With country_code, the key: a review adds rows with a later date.';
comment on column country_risk.provision is 'Where in the act the level comes from: Annex (listed low or high risk) or Article 1(2) (a country not listed: standard risk); null for unknown.';
comment on column country_risk.source is 'What the row was taken from, and how far it is verified: a third-party transcription of the act when the official text was not read.';

-- 2025/1093: adopted 22 May 2025, published in the Official Journal 23 May 2025, in force 26 May 2025.
-- Standard: listed by the transcription and, being absent from the Annex, standard under Art. 1(2).
-- Unknown: every other ISO 3166-1 alpha-2 code. Most are territories the Annex does not name but that
-- belong to a listed country in the EU's country table (French Guiana, Greenland, Puerto Rico, ...):
-- whether they share its level or are unlisted "countries" (standard) the stored sources do not say.
insert into country_risk (country_code, level, act, act_date, applies_from, provision, source)
select x.code, x.level, 'Commission Implementing Regulation (EU) 2025/1093', date '2025-05-22', date '2025-05-26',
       x.provision, x.source
from (
  select code, 'low' as level, 'Annex' as provision,
         'Annex, listed as low risk: third-party transcription (ISO codes of a public reference module, version EU-2025-1093-annex-2025-05-23; counts checked against eudr-scope-mcp (CELLAR), names against Ropes & Gray, May 2025); official text not read.' as source
  from unnest(array[
    'AF','AL','DZ','AD','AG','AM','AU','AT','AZ','BS','BH','BD','BB','BE','BT','BA','BN','BG','BI','CV',
    'CA','CF','CL','CN','KM','CG','CR','HR','CU','CY','CZ','DK','DJ','DM','DO','EG','EE','SZ','FJ','FI',
    'FR','GA','GE','DE','GH','GR','GD','GY','HU','IS','IN','IR','IQ','IE','IT','JM','JP','JO','KZ','KE',
    'KI','KW','KG','LA','LV','LB','LS','LY','LI','LT','LU','MG','MV','ML','MT','MH','MU','FM','MC','MN',
    'ME','MA','NR','NP','NL','NZ','MK','NO','OM','PW','PS','PG','PH','PL','PT','QA','KR','MD','RO','RW',
    'KN','LC','VC','WS','SM','ST','SA','RS','SC','SG','SK','SI','SB','ZA','SS','ES','LK','SR','SE','CH',
    'SY','TJ','TH','TL','TG','TO','TT','TN','TR','TM','TV','UA','AE','GB','US','UY','UZ','VU','VN','YE'
  ]) as code
  union all
  select code, 'high', 'Annex',
         'Annex, listed as high risk: third-party transcription (ISO codes of a public reference module, version EU-2025-1093-annex-2025-05-23; the same four named by eudr-scope-mcp (CELLAR) and by Ropes & Gray, May 2025); official text not read.'
  from unnest(array['BY','KP','MM','RU']) as code
  union all
  select code, 'standard', 'Article 1(2)',
         'Not listed in the Annex, so standard risk under Article 1(2): third-party transcription (the standard-risk codes of a public reference module, version EU-2025-1093-annex-2025-05-23); official text not read.'
  from unnest(array[
    'AO','AR','BZ','BJ','BO','BW','BR','BF','KH','CM','TD','CO','CI','CD','EC','SV','GQ','ER','ET','GM',
    'GT','GN','GW','HT','HN','ID','IL','LR','MW','MY','MR','MX','MZ','NA','NI','NE','NG','PK','PA','PY',
    'PE','SN','SL','SO','SD','TZ','UG','VE','ZM','ZW'
  ]) as code
  union all
  select code, 'unknown', null,
         'Not settled: in none of the stored transcriptions'' lists (low, high, standard); a territory the Annex does not name, or VA, TW, EH, which no stored source addresses. Never guessed: see docs/country-risk.md.'
  from unnest(array[
    'AI','AQ','AS','AW','AX','BL','BM','BQ','BV','CC','CK','CW','CX','EH','FK','FO','GF','GG','GI','GL',
    'GP','GS','GU','HK','HM','IM','IO','JE','KY','MF','MO','MP','MQ','MS','NC','NF','NU','PF','PM','PN',
    'PR','RE','SH','SJ','SX','TC','TF','TK','TW','UM','VA','VG','VI','WF','XK','YT'
  ]) as code
) x;

-- The level in force today per country: the row with the latest applies_from not after today.
create view bi_country_risk as
select distinct on (r.country_code)
       r.country_code, r.level, r.act, r.act_date, r.applies_from, r.provision, r.source
from country_risk r
where r.applies_from <= current_date
order by r.country_code, r.applies_from desc;
comment on view bi_country_risk is 'One row per country (ISO 3166-1 alpha-2) of country_risk: the risk level in force today under the Commission''s benchmarking (Article 29 of Regulation (EU) 2023/1115), that is the row with the latest applies_from not after today, with its act and source. A code not listed here has no level (the views say unknown). See docs/country-risk.md.';
comment on column bi_country_risk.country_code is 'ISO 3166-1 alpha-2 code, upper case.';
comment on column bi_country_risk.level is 'low, standard or high; unknown where the stored sources do not settle it.';
comment on column bi_country_risk.act is 'The act that assigns it.';
comment on column bi_country_risk.act_date is 'The date of the act.';
comment on column bi_country_risk.applies_from is 'The date from which this level applies.';
comment on column bi_country_risk.provision is 'Annex (listed) or Article 1(2) (not listed: standard); null for unknown.';
comment on column bi_country_risk.source is 'What the level was taken from (a third-party transcription when the official text was not read).';

-- ── Views gain the country risk, as new last columns ────────────────────────────────────────────
-- create or replace keeps every existing column (name, type, order, comment) and the views that
-- depend on these; the new columns go at the end. The bodies are those of 0010 (bi_current_plots,
-- bi_suppliers), 0018 (bi_eudr_plot_readiness) and 0015 (bi_eudr_supplier_readiness), plus the join
-- on bi_country_risk: one row per country, so no plot is counted twice.
-- A plot's country of production is plots.country_code (Art. 9(1)(c); warehouse/eudr/country-of-production.ts
-- checks it), matched trimmed and upper case as the readiness check accepts it.
create or replace view bi_current_plots as
select
  p.id as plot_id,
  p.name as plot_name,
  p.owner_id as owner_business_id,
  p.is_own,
  p.country_code,
  p.commodities,
  p.area_ha,
  p.surface_area_m2,
  p.geometry_valid,
  p.geometry_issue,
  normalise_status(p.risk_assessment_status) as risk_assessment_status,
  p.risk_assessment_status as risk_assessment_status_raw,
  normalise_status(p.risk_level) as risk_level,
  p.risk_level as risk_level_raw,
  ((normalise_status(p.risk_level) in ('high', 'medium')) is true
    or (normalise_status(p.risk_assessment_status) in ('in_risk_mitigation', 'eudr_non_compliant')) is true) as flagged,
  coalesce(l.supplier_count, 0)::int as supplier_count,
  coalesce(l.supplier_business_ids, '{}') as supplier_business_ids,
  coalesce(l.supplier_names, '{}') as supplier_names,
  p.most_recent_analysis_id,
  mr.type as most_recent_analysis_type,
  normalise_status(mr.status) as most_recent_analysis_status,
  mr.status as most_recent_analysis_status_raw,
  p.euforobs_analysis_id,
  normalise_status(eu.status) as euforobs_status,
  eu.status as euforobs_status_raw,
  eu.risk_of_deforestation as euforobs_risk_of_deforestation,
  eu.deforested_area_m2 as euforobs_deforested_area_m2,
  eu.analysed_at as euforobs_analysed_at,
  p.precision_analysis_id,
  normalise_status(pr.status) as precision_status,
  pr.status as precision_status_raw,
  pr.risk_of_deforestation as precision_risk_of_deforestation,
  pr.deforested_area_m2 as precision_deforested_area_m2,
  pr.analysed_at as precision_analysed_at,
  mr.risk_of_deforestation as most_recent_risk_of_deforestation,
  mr.deforested_area_m2 as most_recent_deforested_area_m2,
  mr.analysed_at as most_recent_analysed_at,
  p.production_date_start,
  p.production_date_end,
  p.bbox_min_lon,
  p.bbox_min_lat,
  p.bbox_max_lon,
  p.bbox_max_lat,
  p.created_at,
  p.updated_at,
  p.first_seen_at,
  p.changed_at,
  case when p.is_own then own.last_seen_at else l.last_seen_at end as last_seen_at,
  case when nullif(btrim(p.country_code), '') is null then null else coalesce(cr.level, 'unknown') end as country_risk_level
from plots p
left join (
  select ps.plot_id,
         count(*) as supplier_count,
         array_agg(ps.supplier_id order by ps.supplier_id) as supplier_business_ids,
         array_agg(coalesce(b.name, ps.supplier_id) order by ps.supplier_id) as supplier_names,
         max(ls.last_seen_at) as last_seen_at
  from plot_suppliers ps
  left join businesses b on b.id = ps.supplier_id
  left join sync_last_seen ls on ls.scope = ps.supplier_id
  where ps.deleted_at is null
  group by ps.plot_id
) l on l.plot_id = p.id
left join sync_last_seen own on own.scope = 'own-plots'
left join analyses mr on mr.id = p.most_recent_analysis_id
left join analyses eu on eu.id = p.euforobs_analysis_id
left join analyses pr on pr.id = p.precision_analysis_id
left join bi_country_risk cr on cr.country_code = upper(btrim(p.country_code))
where p.deleted_at is null;
comment on view bi_current_plots is 'One row per current plot (not soft-deleted), however many suppliers reach it: suppliers, risk, analyses, area, geometry quality, when last seen, and the risk level of its country of production (country_risk_level). Every number may be summed: sum(area_ha) and count(*) are the warehouse''s hectares and plots.';
comment on column bi_current_plots.country_risk_level is 'Risk level in force today of the plot''s country of production (country_code, trimmed, upper case) under the Commission''s benchmarking (bi_country_risk): low, standard or high; unknown when the code is not settled by the stored sources (a territory, VA, TW, EH) or is not an ISO code at all; null when the plot has no country.';

-- A supplier's country risk: the highest of its plots', unknown ranked above standard and below high
-- (an unknown level could be either). Eligible for simplified due diligence: every plot low.
create or replace view bi_suppliers as
with supplier as (
  -- One row per supplier even if the service lists two connections to it: the oldest.
  select distinct on (c.partner_business_id)
         c.partner_business_id as supplier_business_id, c.id as connection_id, c.created_at as connected_at,
         c.plots_count, c.plots_commodities
  from business_connections c
  where c.role = 'supplier' and c.deleted_at is null
  order by c.partner_business_id, c.created_at nulls last, c.id
),
linked as not materialized (
  select ps.supplier_id, ps.missing_since, p.*
  from plot_suppliers ps
  join bi_current_plots p on p.plot_id = ps.plot_id
  where ps.deleted_at is null
),
figures as (
  select l.supplier_id,
         count(*) as plots,
         count(*) filter (where l.missing_since is not null) as plots_deletion_deferred,
         count(*) filter (where l.supplier_count > 1) as plots_shared,
         sum(1.0::float8 / l.supplier_count) as plots_allocated,
         coalesce(sum(l.area_ha), 0) as hectares,
         coalesce(sum(l.area_ha / l.supplier_count), 0) as hectares_allocated,
         array_agg(distinct l.country_code order by l.country_code) filter (where l.country_code is not null) as plot_country_codes,
         count(*) filter (where l.flagged) as flagged_plots,
         coalesce(sum(l.area_ha) filter (where l.flagged), 0) as flagged_hectares,
         count(*) filter (where l.risk_level = 'high') as plots_risk_high,
         count(*) filter (where l.risk_level = 'medium') as plots_risk_medium,
         count(*) filter (where l.risk_level = 'low') as plots_risk_low,
         count(*) filter (where l.risk_level = 'none') as plots_risk_none,
         count(*) filter (where l.risk_level is null) as plots_risk_not_assessed,
         count(*) filter (where l.risk_level not in ('high', 'medium', 'low', 'none')) as plots_risk_other,
         count(*) filter (where l.risk_assessment_status = 'new') as plots_status_new,
         count(*) filter (where l.risk_assessment_status = 'under_review') as plots_status_under_review,
         count(*) filter (where l.risk_assessment_status = 'in_risk_mitigation') as plots_status_in_risk_mitigation,
         count(*) filter (where l.risk_assessment_status = 'eudr_compliant') as plots_status_eudr_compliant,
         count(*) filter (where l.risk_assessment_status = 'eudr_non_compliant') as plots_status_eudr_non_compliant,
         count(*) filter (where l.risk_assessment_status is null
                            or l.risk_assessment_status not in ('new', 'under_review', 'in_risk_mitigation', 'eudr_compliant', 'eudr_non_compliant')) as plots_status_other,
         count(*) filter (where l.most_recent_analysis_status = 'succeeded') as plots_analysis_succeeded,
         count(*) filter (where l.most_recent_analysis_status in ('pending', 'not_started', 'started')) as plots_analysis_in_progress,
         count(*) filter (where l.most_recent_analysis_status = 'failed') as plots_analysis_failed,
         count(*) filter (where l.most_recent_analysis_id is null) as plots_not_analysed,
         count(*) filter (where l.most_recent_analysis_id is not null
                            and (l.most_recent_analysis_status is null
                                 or l.most_recent_analysis_status not in ('succeeded', 'pending', 'not_started', 'started', 'failed'))) as plots_analysis_other,
         count(*) filter (where l.precision_analysis_id is not null) as plots_with_precision,
         max(l.most_recent_risk_of_deforestation) as max_risk_of_deforestation,
         coalesce(sum(l.most_recent_deforested_area_m2), 0) as deforested_area_m2,
         max(l.most_recent_analysed_at) as last_analysed_at,
         count(*) filter (where not l.geometry_valid) as invalid_geometries,
         count(*) filter (where l.country_risk_level = 'low') as plots_country_risk_low,
         count(*) filter (where l.country_risk_level = 'standard') as plots_country_risk_standard,
         count(*) filter (where l.country_risk_level = 'high') as plots_country_risk_high,
         count(*) filter (where l.country_risk_level is null or l.country_risk_level not in ('low', 'standard', 'high')) as plots_country_risk_unknown
  from linked l
  group by l.supplier_id
),
commodities as (
  select l.supplier_id, array_agg(distinct c.commodity order by c.commodity) as commodities
  from linked l cross join lateral unnest(l.commodities) as c(commodity)
  group by l.supplier_id
)
select
  s.supplier_business_id,
  coalesce(b.name, s.supplier_business_id) as supplier_name,
  b.address_country_code as country_code,
  b.address_country as country,
  s.connection_id,
  s.connected_at,
  s.plots_count as plots_announced,
  s.plots_commodities as commodities_announced,
  coalesce(f.plots, 0) as plots,
  s.plots_count - coalesce(f.plots, 0) as plots_difference,
  coalesce(f.plots_deletion_deferred, 0) as plots_deletion_deferred,
  coalesce(f.plots_shared, 0) as plots_shared,
  coalesce(f.plots_allocated, 0) as plots_allocated,
  coalesce(f.hectares, 0) as hectares,
  coalesce(f.hectares_allocated, 0) as hectares_allocated,
  coalesce(c.commodities, '{}') as commodities,
  coalesce(f.plot_country_codes, '{}') as plot_country_codes,
  coalesce(f.flagged_plots, 0) as flagged_plots,
  coalesce(f.flagged_hectares, 0) as flagged_hectares,
  coalesce(f.plots_risk_high, 0) as plots_risk_high,
  coalesce(f.plots_risk_medium, 0) as plots_risk_medium,
  coalesce(f.plots_risk_low, 0) as plots_risk_low,
  coalesce(f.plots_risk_none, 0) as plots_risk_none,
  coalesce(f.plots_risk_not_assessed, 0) as plots_risk_not_assessed,
  coalesce(f.plots_risk_other, 0) as plots_risk_other,
  coalesce(f.plots_status_new, 0) as plots_status_new,
  coalesce(f.plots_status_under_review, 0) as plots_status_under_review,
  coalesce(f.plots_status_in_risk_mitigation, 0) as plots_status_in_risk_mitigation,
  coalesce(f.plots_status_eudr_compliant, 0) as plots_status_eudr_compliant,
  coalesce(f.plots_status_eudr_non_compliant, 0) as plots_status_eudr_non_compliant,
  coalesce(f.plots_status_other, 0) as plots_status_other,
  coalesce(f.plots_analysis_succeeded, 0) as plots_analysis_succeeded,
  coalesce(f.plots_analysis_in_progress, 0) as plots_analysis_in_progress,
  coalesce(f.plots_analysis_failed, 0) as plots_analysis_failed,
  coalesce(f.plots_analysis_other, 0) as plots_analysis_other,
  coalesce(f.plots_not_analysed, 0) as plots_not_analysed,
  coalesce(f.plots_with_precision, 0) as plots_with_precision,
  f.max_risk_of_deforestation,
  coalesce(f.deforested_area_m2, 0) as deforested_area_m2,
  f.last_analysed_at,
  coalesce(f.invalid_geometries, 0) as invalid_geometries,
  ls.last_seen_at,
  case when coalesce(f.plots, 0) = 0 then null
       when f.plots_country_risk_high > 0 then 'high'
       when f.plots_country_risk_unknown > 0 then 'unknown'
       when f.plots_country_risk_standard > 0 then 'standard'
       else 'low' end as country_risk_level,
  coalesce(f.plots_country_risk_low, 0)::int as plots_country_risk_low,
  coalesce(f.plots_country_risk_standard, 0)::int as plots_country_risk_standard,
  coalesce(f.plots_country_risk_high, 0)::int as plots_country_risk_high,
  coalesce(f.plots_country_risk_unknown, 0)::int as plots_country_risk_unknown,
  case when coalesce(f.plots, 0) = 0 then null else f.plots_country_risk_low = f.plots end as simplified_due_diligence_eligible
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join commodities c on c.supplier_id = s.supplier_business_id
left join sync_last_seen ls on ls.scope = s.supplier_business_id;
comment on column bi_suppliers.country_risk_level is 'The highest risk level of the countries of production of the supplier''s current plots (bi_current_plots.country_risk_level): high if any plot is high; otherwise unknown if any is unknown or has no country (it could be higher); otherwise standard if any is standard; otherwise low. Null for a supplier without current plots.';
comment on column bi_suppliers.plots_country_risk_low is 'Plots whose country of production is of low risk (bi_current_plots.country_risk_level).';
comment on column bi_suppliers.plots_country_risk_standard is 'Plots whose country of production is of standard risk.';
comment on column bi_suppliers.plots_country_risk_high is 'Plots whose country of production is of high risk.';
comment on column bi_suppliers.plots_country_risk_unknown is 'Plots whose country''s risk is unknown (not settled by the stored sources, or not an ISO code) or that have no country.';
comment on column bi_suppliers.simplified_due_diligence_eligible is 'true when the supplier has current plots and every one lies in a low-risk country (plots_country_risk_low = plots): eligible for simplified due diligence (Article 13 of Regulation (EU) 2023/1115) as far as the countries go, subject to the operator''s own assessment that the risk of circumvention, or of mixing with products of unknown origin or from standard- or high-risk countries, is negligible (Art. 13(1)), and not when it has information of a risk (Art. 13(2)). false when any plot is in a standard-, high- or unknown-risk country or has none; null without current plots.';

create or replace view bi_eudr_plot_readiness as
select
  p.id as plot_id,
  p.name as plot_name,
  coalesce(l.supplier_business_ids, '{}') as supplier_business_ids,
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
left join bi_country_risk cr on cr.country_code = upper(btrim(p.country_code))
where p.deleted_at is null;
comment on column bi_eudr_plot_readiness.country_risk_level is 'Risk level in force today of the plot''s country of production (country_code, trimmed, upper case) under the Commission''s benchmarking (bi_country_risk): low, standard or high; unknown when the code is not settled by the stored sources (a territory, VA, TW, EH) or is not an ISO code at all; null when the plot has no country.';

create or replace view bi_eudr_supplier_readiness as
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
         coalesce(sum(l.area_ha) filter (where l.ready), 0) as hectares_ready,
         count(*) filter (where l.country_risk_level = 'low') as plots_country_risk_low,
         count(*) filter (where l.country_risk_level = 'standard') as plots_country_risk_standard,
         count(*) filter (where l.country_risk_level = 'high') as plots_country_risk_high,
         count(*) filter (where l.country_risk_level is null or l.country_risk_level not in ('low', 'standard', 'high')) as plots_country_risk_unknown
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
  coalesce(r.top_reasons, '[]'::jsonb) as top_reasons,
  case when coalesce(f.plots, 0) = 0 then null
       when f.plots_country_risk_high > 0 then 'high'
       when f.plots_country_risk_unknown > 0 then 'unknown'
       when f.plots_country_risk_standard > 0 then 'standard'
       else 'low' end as country_risk_level,
  coalesce(f.plots_country_risk_low, 0)::int as plots_country_risk_low,
  coalesce(f.plots_country_risk_standard, 0)::int as plots_country_risk_standard,
  coalesce(f.plots_country_risk_high, 0)::int as plots_country_risk_high,
  coalesce(f.plots_country_risk_unknown, 0)::int as plots_country_risk_unknown,
  case when coalesce(f.plots, 0) = 0 then null else f.plots_country_risk_low = f.plots end as simplified_due_diligence_eligible
from supplier s
left join businesses b on b.id = s.supplier_business_id
left join figures f on f.supplier_id = s.supplier_business_id
left join reasons r on r.supplier_id = s.supplier_business_id;
comment on column bi_eudr_supplier_readiness.country_risk_level is 'The highest risk level of the countries of production of the supplier''s current plots (bi_eudr_plot_readiness.country_risk_level): high if any plot is high; otherwise unknown if any is unknown or has no country (it could be higher); otherwise standard if any is standard; otherwise low. Null for a supplier without current plots.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_low is 'Plots whose country of production is of low risk (bi_eudr_plot_readiness.country_risk_level).';
comment on column bi_eudr_supplier_readiness.plots_country_risk_standard is 'Plots whose country of production is of standard risk.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_high is 'Plots whose country of production is of high risk.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_unknown is 'Plots whose country''s risk is unknown (not settled by the stored sources, or not an ISO code) or that have no country.';
comment on column bi_eudr_supplier_readiness.simplified_due_diligence_eligible is 'true when the supplier has current plots and every one lies in a low-risk country (plots_country_risk_low = plots): eligible for simplified due diligence (Article 13 of Regulation (EU) 2023/1115) as far as the countries go, subject to the operator''s own assessment that the risk of circumvention, or of mixing with products of unknown origin or from standard- or high-risk countries, is negligible (Art. 13(1)), and not when it has information of a risk (Art. 13(2)). false when any plot is in a standard-, high- or unknown-risk country or has none; null without current plots.';

-- Default privileges (0002) give ddsync_reader the new table and view when the migrating role made
-- them; granted again here for clusters migrated by another role.
grant select on all tables in schema public to ddsync_reader;
