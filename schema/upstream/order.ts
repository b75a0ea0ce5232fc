/**
 * Which of several records is "the one" when the service holds more than one where there should be
 * one (two transactions with our customId, two webhooks with our marker): the oldest, by createdAt,
 * then by id. Whoever asks (the client finding a transaction again, reconciling webhooks, the
 * warehouse naming them) picks the same one, so this order lives here once.
 */
export interface CreatedRecord {
  id: string;
  createdAt?: string | null;
}

/** createdAt as a time (text order would put `…00.5Z` before `…00Z`); unreadable or absent counts as oldest. */
function createdMs(r: CreatedRecord): number {
  const ms = r.createdAt ? Date.parse(r.createdAt) : Number.NaN;
  return Number.isFinite(ms) ? ms : Number.NEGATIVE_INFINITY;
}

/** A sort comparator: oldest createdAt first, then id (in code-unit order, the same on every machine). */
export function oldestFirst(a: CreatedRecord, b: CreatedRecord): number {
  const at = createdMs(a);
  const bt = createdMs(b);
  if (at !== bt) return at < bt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
