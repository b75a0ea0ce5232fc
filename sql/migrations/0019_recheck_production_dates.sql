-- The production-period check read a date with blanks around it (" 2021-01-01") as a date, while the
-- warehouse stores such a value as null with a value issue (sync_issues, field productionDateStart
-- or productionDateEnd): the finding and the stored column disagreed. The check now reads dates as
-- the warehouse stores them. Plots whose production dates were ever refused are rewritten by the next
-- refresh so their findings follow the rule (an empty content_hash: the view says not_checked until
-- then, 0018), and the supplier pages that hold them are read again rather than reused.
create temp table refused_dates as
  select distinct record_id as id from sync_issues
  where entity = 'plots' and field in ('productionDateStart', 'productionDateEnd') and record_id is not null;
update plots set content_hash = '' where deleted_at is null and id in (select id from refused_dates);
delete from source_pages sp
where (sp.scope, sp.page) in (
  select s.scope, s.page from source_pages s cross join lateral unnest(s.ids) as u(id)
  where u.id in (select id from refused_dates));
drop table refused_dates;
