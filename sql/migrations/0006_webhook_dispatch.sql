-- Dispatching received webhook events: how often it was tried and when next. An event whose
-- dispatch keeps failing (Temporal unreachable, say) backs off from 30 seconds to an hour and is
-- marked `failed` after 20 tries, so it never holds up newer ones; its transaction's workflow
-- still reads the transaction on its own schedule, so nothing is lost.
alter table webhook_events add column dispatch_attempts integer not null default 0;
alter table webhook_events add column next_dispatch_at timestamptz;
comment on column webhook_events.dispatch_attempts is 'Failed attempts to dispatch the event (signal its transaction''s workflow).';
comment on column webhook_events.next_dispatch_at is 'When a pending event whose dispatch failed is tried again.';
