/**
 * The order a refresh reads its suppliers in, a few at a time: the largest first (by the pages the
 * connection's plotsCount predicts), so the last suppliers to start are the small ones and the run
 * does not end with one big supplier read alone while the other lanes sit idle (the classic
 * longest-first rule for a fixed number of lanes). A supplier whose size is unknown may be the
 * largest, so it goes first too. Equal sizes keep the service's order. Only an order: a wrong
 * plotsCount costs time, never data.
 */
export function largestFirst<S extends { expectedPages: number | null }>(suppliers: readonly S[]): S[] {
  const size = (s: S) => (s.expectedPages === null ? Number.POSITIVE_INFINITY : s.expectedPages);
  return suppliers
    .map((supplier, position) => ({ supplier, position }))
    .sort((a, b) => size(b.supplier) - size(a.supplier) || a.position - b.position)
    .map((entry) => entry.supplier);
}
