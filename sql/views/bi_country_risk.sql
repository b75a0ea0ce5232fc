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

grant select on bi_country_risk to ddsync_reader;
