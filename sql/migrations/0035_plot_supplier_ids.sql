-- The live links of each plot as one sorted array, kept by triggers on plot_suppliers, so that the
-- per-plot views (bi_current_plots, bi_eudr_plot_readiness) read a plot's supplier_business_ids from a
-- column instead of aggregating its links for each plot they look at (docs/analyst-views.md).
--
-- Why: an analyst's filter `'<id>' = any(supplier_business_ids)` cannot reach an index (Postgres
-- indexes `column op constant`, never `constant = any(column)`), and while the array was built inside
-- the view, per plot, the filter ran after the links of every plot scanned had been aggregated: 12–26 µs
-- a plot, and a limited read started where the last sequential scan of plots stopped
-- (synchronize_seqscans), so the first 1,000 rows of one supplier took from 58 ms to 1.2 s at 100,000
-- plots depending on where that was. With the array stored here, the views put this table first, the
-- filter is tested on its rows (4 MB at 100,000 plots, against 87 MB of plots) and only the plots it
-- keeps are looked up, by key.
--
-- A row is kept for a plot whose links all went (its array empty), and a plot that never had a link has
-- none: the views read "no row" and "no supplier" alike. plot_id refers to plots.id (no foreign key, as
-- for plot_suppliers); a row outlives a plot soft-deleted, like its links.
create table plot_supplier_ids (
  plot_id text primary key,
  supplier_ids text[] not null
);
comment on table plot_supplier_ids is 'One row per plot that has or had a link in plot_suppliers: the supplier ids of its live links (deleted_at is null), sorted. Kept by triggers on plot_suppliers (0035), in the writing transaction; the per-plot views read supplier_business_ids from it. Not written by ddsync''s code.';
comment on column plot_supplier_ids.plot_id is 'The plot (plots.id).';
comment on column plot_supplier_ids.supplier_ids is 'The supplier ids (plot_suppliers.supplier_id) of the plot''s live links, sorted as `order by supplier_id` sorts them; empty when every link of the plot is deleted.';

-- ids with added put in and removed taken out: sorted, each once.
create function plot_supplier_ids_merged(ids text[], added text[], removed text[]) returns text[]
language sql immutable parallel safe
as $$
  select coalesce(array_agg(x.id order by x.id), '{}')
  from (select unnest(ids) union select unnest(added) except select unnest(removed)) as x(id)
$$;
comment on function plot_supplier_ids_merged(text[], text[], text[]) is 'The sorted, distinct ids plus added less removed (plot_supplier_ids, 0035).';

-- Once per statement, from its transition tables: the links it made live and those it ended (a link
-- is live while deleted_at is null), applied to the plots' rows as a change, never recounted from
-- plot_suppliers: two transactions linking one plot to two suppliers at once (pages of two suppliers
-- that share it) each add their own id to the row as the other committed it (ON CONFLICT DO UPDATE and
-- UPDATE act on the latest version), where a recount would see only its own links. Added rows are
-- taken in plot_id order, as the refresh writes its pages, so two pages sharing plots wait for each
-- other rather than deadlock. An update that changes no link's liveness (missing_since, changed_at)
-- finds nothing to do. Links are ended by the sweep, one statement per refresh.
create function plot_supplier_ids_apply() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'TRUNCATE' then
    truncate plot_supplier_ids;
  elsif tg_op = 'INSERT' then
    insert into plot_supplier_ids as s (plot_id, supplier_ids)
    select n.plot_id, array_agg(n.supplier_id order by n.supplier_id)
    from linked n where n.deleted_at is null
    group by n.plot_id order by n.plot_id
    on conflict (plot_id) do update set supplier_ids = plot_supplier_ids_merged(s.supplier_ids, excluded.supplier_ids, '{}');
  elsif tg_op = 'DELETE' then
    update plot_supplier_ids s set supplier_ids = plot_supplier_ids_merged(s.supplier_ids, '{}', r.ids)
    from (select o.plot_id, array_agg(o.supplier_id) as ids from unlinked o where o.deleted_at is null group by o.plot_id) r
    where s.plot_id = r.plot_id;
  else
    insert into plot_supplier_ids as s (plot_id, supplier_ids)
    select a.plot_id, array_agg(a.supplier_id order by a.supplier_id)
    from (select n.plot_id, n.supplier_id from linked n where n.deleted_at is null
          except select o.plot_id, o.supplier_id from unlinked o where o.deleted_at is null) a
    group by a.plot_id order by a.plot_id
    on conflict (plot_id) do update set supplier_ids = plot_supplier_ids_merged(s.supplier_ids, excluded.supplier_ids, '{}');
    update plot_supplier_ids s set supplier_ids = plot_supplier_ids_merged(s.supplier_ids, '{}', r.ids)
    from (select e.plot_id, array_agg(e.supplier_id) as ids
          from (select o.plot_id, o.supplier_id from unlinked o where o.deleted_at is null
                except select n.plot_id, n.supplier_id from linked n where n.deleted_at is null) e
          group by e.plot_id) r
    where s.plot_id = r.plot_id;
  end if;
  return null;
end
$$;
comment on function plot_supplier_ids_apply() is 'Keeps plot_supplier_ids as plot_suppliers'' live links say, from each statement''s transition tables (0035).';

-- Postgres allows a transition table on a trigger of one event only: a trigger per event.
create trigger plot_supplier_ids_insert after insert on plot_suppliers referencing new table as linked
  for each statement execute function plot_supplier_ids_apply();
create trigger plot_supplier_ids_update after update on plot_suppliers referencing old table as unlinked new table as linked
  for each statement execute function plot_supplier_ids_apply();
create trigger plot_supplier_ids_delete after delete on plot_suppliers referencing old table as unlinked
  for each statement execute function plot_supplier_ids_apply();
create trigger plot_supplier_ids_truncate after truncate on plot_suppliers
  for each statement execute function plot_supplier_ids_apply();

-- What plot_suppliers holds now. The triggers above were created first in this transaction, and creating
-- one locks plot_suppliers against writes until it commits: no link is missed between the two.
insert into plot_supplier_ids (plot_id, supplier_ids)
select ps.plot_id, array_agg(ps.supplier_id order by ps.supplier_id)
from plot_suppliers ps where ps.deleted_at is null
group by ps.plot_id;

grant select on plot_supplier_ids to ddsync_reader;
