-- A value the warehouse cannot hold as sent (a NUL, a lone surrogate) is stored with U+FFFD in its
-- place and recorded, never changed without a word (docs/warehouse.md, "Values stored otherwise than
-- sent"): sync_issues gains the action `replaced` and the value as sent, as JSON text.
alter table sync_issues drop constraint sync_issues_action_check;
alter table sync_issues
  add constraint sync_issues_action_check check (action in ('skipped', 'nulled', 'replaced')),
  add column sent_value text;
comment on table sync_issues is 'Records the service sent that could not be stored as sent: skipped (left out), nulled (stored with that value null) or replaced (stored with U+FFFD for what Postgres cannot hold), with the field and the rule.';
comment on column sync_issues.action is 'skipped (the record was left out), nulled (stored, that value null) or replaced (stored, each NUL and lone surrogate of that value as U+FFFD).';
comment on column sync_issues.sent_value is 'For replaced: the value as sent, as JSON text with NUL and lone surrogates escaped (\u0000, \ud800); for a key, its member {"key": value}. Null otherwise.';
