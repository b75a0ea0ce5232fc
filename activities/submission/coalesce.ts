/**
 * Requests made while one batch is being handled wait and go together in the next: one call of
 * `handle` at a time, each with everything asked for since the previous call began. A chunk's lanes
 * claim their creates through it, each just before its own request, without a statement per key when
 * several lanes are ready at once (and without one lane waiting for another's request, as a slice did).
 */
export function coalesce<I, O>(handle: (items: I[]) => Promise<Map<I, O>>): (item: I) => Promise<O | undefined> {
  let waiting: Array<{ item: I; resolve: (o: O | undefined) => void; reject: (e: unknown) => void }> = [];
  let busy = false;
  const drain = async () => {
    busy = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        const results = await handle(batch.map((w) => w.item));
        for (const w of batch) w.resolve(results.get(w.item));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    busy = false;
  };
  return (item) =>
    new Promise<O | undefined>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!busy) void drain();
    });
}
