/**
 * When a paginated read is done. Lists are plain arrays without total or next link, so the only
 * signal is the page size (upstream-facts): fewer items than the effective limit, or none, ends
 * the read; exactly `limit` items means there may be more.
 */
export function hasMorePages(itemsOnPage: number, effectiveLimit: number): boolean {
  return itemsOnPage > 0 && itemsOnPage >= effectiveLimit;
}

/**
 * A service that ignores `page` (or serves an invalid page as page 1) would return the same page
 * forever. Two consecutive full pages with the same first and last id are treated as that.
 */
export function isRepeatedPage(
  previous: readonly { id: string }[] | undefined,
  current: readonly { id: string }[],
): boolean {
  if (!previous || previous.length === 0 || current.length === 0) return false;
  return previous[0]!.id === current[0]!.id && previous.at(-1)!.id === current.at(-1)!.id;
}
