create view bi_transaction_latency as
select t.batch_id,
       count(*) as available,
       round(percentile_cont(0.5) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as median_seconds_submit_to_available,
       round(percentile_cont(0.95) within group (order by extract(epoch from (t.validated_at - t.submitted_at)))::numeric, 1) as p95_seconds_submit_to_available,
       grouping(t.batch_id) = 1 as is_overall
from transactions t
where t.state = 'available' and t.submitted_at is not null and t.validated_at is not null
group by rollup (t.batch_id);

comment on view bi_transaction_latency is 'One row per batch with AVAILABLE transactions, plus one over all batches (is_overall): time from submit to AVAILABLE, median and p95. Do not sum the rows: the overall row repeats the batches.';
comment on column bi_transaction_latency.batch_id is 'The submission batch; null on the overall row.';
comment on column bi_transaction_latency.available is 'Transactions that reached AVAILABLE with both times known.';
comment on column bi_transaction_latency.median_seconds_submit_to_available is 'Median seconds from submit to AVAILABLE.';
comment on column bi_transaction_latency.p95_seconds_submit_to_available is '95th percentile of the same.';
comment on column bi_transaction_latency.is_overall is 'The row over all batches.';

grant select on bi_transaction_latency to ddsync_reader;
