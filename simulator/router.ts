// Route table types (the routing itself is Hono's, in http-server.ts).

export interface RequestContext {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The `:param` segments of the route's path, in order, percent-decoded. */
  params: string[];
  body: unknown;
}

/** A response: JSON, raw bytes, or string chunks pulled one at a time (back-pressure). */
export interface Reply {
  status: number;
  json?: unknown;
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Not advanced while the client is not reading; abandoned (return()) when it goes away. */
  stream?: () => Iterable<string> | AsyncIterable<string>;
}

export interface Route {
  method: string;
  /**
   * Path pattern with `:param` segments, e.g. /webhooks/:id/stats. Routes are matched in the order
   * given: a static path comes before a parameter one it overlaps (/webhooks/events before /webhooks/:id).
   */
  path: string;
  handler: (ctx: RequestContext) => Reply | Promise<Reply>;
  /** No bearer token required (token endpoint, /_sim/ control). */
  public?: boolean;
}

export const json = (status: number, body: unknown): Reply => ({ status, json: body });
export const noContent = (): Reply => ({ status: 204 });
