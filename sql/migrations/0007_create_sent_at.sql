-- When ddsync last sent the create (POST /transactions) of a request. A create whose outcome is
-- unknown (timed out, connection lost) may still be applied by the service a little later: no
-- second create is sent for the same key until the transaction has had time to appear under its
-- customId (the transaction's timing, createSettleMs), so a slow service cannot make two.
alter table transaction_requests add column create_sent_at timestamptz;
comment on column transaction_requests.create_sent_at is 'When the last POST /transactions for this key was sent (a second is not sent until the first had time to settle).';
