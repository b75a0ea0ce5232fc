/**
 * A fetch that records the status of every exchange, so contract tests can assert the exact
 * success status (201, 202, 204) that the client itself does not surface.
 */
export interface Exchange {
  method: string;
  path: string;
  status: number;
}

export function recordingFetch(): {
  fetch: typeof fetch;
  exchanges: Exchange[];
  last(method: string, path: RegExp): Exchange | undefined;
} {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    exchanges.push({
      method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
      path: new URL(url).pathname,
      status: res.status,
    });
    return res;
  };
  return {
    fetch: recording,
    exchanges,
    last: (method, path) => exchanges.findLast((e) => e.method === method && path.test(e.path)),
  };
}
