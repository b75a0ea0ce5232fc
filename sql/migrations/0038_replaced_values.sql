-- A value the warehouse cannot hold as sent (a NUL, a lone surrogate) is stored with U+FFFD in its
-- place and recorded, never changed without a word (docs/warehouse.md, "Values stored otherwise than
-- sent"): sync_issues gains the action `replaced` and the value as sent, as JSON text.
alter table sync_issues drop constraint sync_issues_action_check;
alter table sync_issues
  add constraint sync_issues_action_check check (action in ('skipped', 'nulled', 'replaced')),
  add column sent_value text;
comment on table sync_issues is 'Records the service sent that could not be stored as sent: skipped (left out), nulled (stored with that value null) or replaced (stored with U+FFFD for what Postgres cannot hold), with the field and the rule.';
comment on column sync_issues.action is 'skipped (the record was left out), nulled (stored, that value null) or replaced (stored, each NUL and lone surrogate of that value as U+FFFD).';
comment on column sync_issues.sent_value is 'For replaced: the value as sent, as JSON text with NUL and lone surrogates escaped (\u0000, \ud800); for a key, the key as sent (its value is stored under the key as replaced). Null otherwise.';

-- Where a write has no run (webhook events, the service's answers about transactions, webhooks and
-- their attempts), the replacements are kept on the row itself: {"<path>": {"rule": …, "sent": …}}.
alter table webhook_events add column replaced_values jsonb;
alter table transactions add column replaced_values jsonb;
alter table webhooks add column replaced_values jsonb;
alter table webhook_attempts add column replaced_values jsonb;
comment on column webhook_events.replaced_values is 'Values of the message stored with U+FFFD for a NUL or a lone surrogate, by path (payload.data.name, msgId): {"rule", "sent": the value as sent, as JSON text}. Null when none.';
comment on column transactions.replaced_values is 'Values of the service''s answers stored with U+FFFD for a NUL or a lone surrogate, by field (status, referenceNumber, ...): {"rule", "sent": the value as sent, as JSON text}; a field seen again replaces its entry. Null when none.';
comment on column webhooks.replaced_values is 'Values of the webhook as listed stored with U+FFFD for a NUL or a lone surrogate, by field: {"rule", "sent": the value as sent, as JSON text}. Null when none.';
comment on column webhook_attempts.replaced_values is 'Values of the attempt stored with U+FFFD for a NUL or a lone surrogate, by field (response, ...): {"rule", "sent": the value as sent, as JSON text}. Null when none.';
