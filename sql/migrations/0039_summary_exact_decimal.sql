-- The exact terms of the summaries' sums (0037) as the decimal that reads back as the same float8:
-- its shortest text (float8out), parsed as numeric. A plain float8::numeric cast rounds to 15
-- significant digits (lossy for most values: two floats may become one decimal) and costs about a
-- microsecond a value (7 per link of a supplier in a making); through text it is exact and about
-- twice as fast per value.
-- A SQL function of one expression is inlined by the planner: no call per value. Migrating makes
-- every summary again from every plot (warehouse/migrate.ts), so no row keeps a sum of the old terms.
create function summary_exact(value double precision) returns numeric
language sql immutable strict parallel safe
as $$ select value::text::numeric $$;
comment on function summary_exact(double precision) is 'The float8 as the exact decimal its shortest text reads back as (a term of the summaries'' exact sums, 0039).';
