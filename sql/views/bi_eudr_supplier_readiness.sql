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
