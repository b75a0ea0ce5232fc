create view bi_eudr_supplier_readiness as
with supplier as (
  select c.partner_business_id as supplier_business_id
  from business_connections c
  where c.role = 'supplier' and c.deleted_at is null
  union
  -- Every business with a live link (summary_suppliers has a row for each).
  select f.supplier_id from summary_suppliers f
),
-- The figures of its current plots as of the end of the last refresh (summary_suppliers, kept by
-- warehouse/analyst-summaries.ts: docs/analyst-summaries.md); the country risk levels in force today.
country_risk as (
  select c.supplier_id,
         coalesce(sum(c.plots) filter (where x.level = 'low'), 0)::bigint as plots_country_risk_low,
         coalesce(sum(c.plots) filter (where x.level = 'standard'), 0)::bigint as plots_country_risk_standard,
         coalesce(sum(c.plots) filter (where x.level = 'high'), 0)::bigint as plots_country_risk_high,
         coalesce(sum(c.plots) filter (where x.level is null or x.level not in ('low', 'standard', 'high')), 0)::bigint as plots_country_risk_unknown
  from summary_supplier_countries c
  left join bi_country_risk cr on cr.country_code = c.country_key
  cross join lateral (select case when c.country_key = '' then null else coalesce(cr.level, 'unknown') end as level) x
  group by c.supplier_id
),
figures as (
  select f.supplier_id, f.plots, f.plots_ready, f.readiness_hectares as hectares, f.hectares_ready,
         r.plots_country_risk_low, r.plots_country_risk_standard, r.plots_country_risk_high, r.plots_country_risk_unknown
  from summary_suppliers f
  left join country_risk r on r.supplier_id = f.supplier_id
),
reasons as (
  select f.supplier_id, f.top_reasons from summary_suppliers f
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
comment on column bi_eudr_supplier_readiness.country_risk_level is 'The highest risk level of the countries of production of the supplier''s current plots (bi_eudr_plot_readiness.country_risk_level): high if any plot is high; otherwise unknown if any is unknown or has no country (it could be higher); otherwise standard if any is standard; otherwise low. Null for a supplier without current plots.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_low is 'Plots whose country of production is of low risk (bi_eudr_plot_readiness.country_risk_level).';
comment on column bi_eudr_supplier_readiness.plots_country_risk_standard is 'Plots whose country of production is of standard risk.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_high is 'Plots whose country of production is of high risk.';
comment on column bi_eudr_supplier_readiness.plots_country_risk_unknown is 'Plots whose country''s risk is unknown (not settled by the stored sources, or not an ISO code) or that have no country.';
comment on column bi_eudr_supplier_readiness.simplified_due_diligence_eligible is 'true when the supplier has current plots and every one lies in a low-risk country (plots_country_risk_low = plots): eligible for simplified due diligence (Article 13 of Regulation (EU) 2023/1115) as far as the countries go, subject to the operator''s own assessment that the risk of circumvention, or of mixing with products of unknown origin or from standard- or high-risk countries, is negligible (Art. 13(1)), and not when it has information of a risk (Art. 13(2)). false when any plot is in a standard-, high- or unknown-risk country or has none; null without current plots.';

grant select on bi_eudr_supplier_readiness to ddsync_reader;
