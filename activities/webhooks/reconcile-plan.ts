import type { Webhook } from '../../schema/upstream.ts';
import { describedAs, managedName, type DesiredWebhook } from '../../schema/desired-webhooks.ts';
import { oldestFirst } from '../../schema/upstream/order.ts';

/**
 * What reconciling the desired webhooks with the service's takes: create what is missing, patch what
 * drifted (URL, description) or was paused, recreate what listens to other events (PATCH cannot change
 * events), delete ddsync's own duplicates and those no longer configured. Webhooks without ddsync's
 * marker are never in the plan. Pure.
 */
export type WebhookAction =
  | { kind: 'create'; name: string; desired: DesiredWebhook }
  | { kind: 'patch'; name: string; id: string; desired: DesiredWebhook; changes: string[] }
  | { kind: 'recreate'; name: string; id: string; desired: DesiredWebhook; changes: string[] }
  | { kind: 'delete'; name: string; id: string; reason: string };

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
}

export function planWebhooks(desired: readonly DesiredWebhook[], actual: readonly Webhook[]): WebhookAction[] {
  const ours = new Map<string, Webhook[]>();
  for (const w of actual) {
    const name = managedName(w.description);
    if (name === null) continue;
    ours.set(name, [...(ours.get(name) ?? []), w]);
  }
  const actions: WebhookAction[] = [];
  for (const d of desired) {
    const found = [...(ours.get(d.name) ?? [])].sort(oldestFirst);
    ours.delete(d.name);
    const [keep, ...extra] = found;
    for (const w of extra)
      actions.push({ kind: 'delete', name: d.name, id: w.id, reason: 'a second webhook with the same name' });
    if (!keep) {
      actions.push({ kind: 'create', name: d.name, desired: d });
      continue;
    }
    const changes: string[] = [];
    if (keep.url !== d.url) changes.push('url');
    if (keep.description !== describedAs(d)) changes.push('description');
    if ((keep.isActive ?? true) !== d.active) changes.push(d.active ? 'reactivate' : 'deactivate');
    if (!sameSet(keep.events ?? [], d.events))
      actions.push({ kind: 'recreate', name: d.name, id: keep.id, desired: d, changes: ['events', ...changes] });
    else if (changes.length > 0) actions.push({ kind: 'patch', name: d.name, id: keep.id, desired: d, changes });
  }
  for (const [name, hooks] of ours) {
    for (const w of hooks) actions.push({ kind: 'delete', name, id: w.id, reason: 'no longer in DDSYNC_WEBHOOKS' });
  }
  return actions;
}
