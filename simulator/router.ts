// Route table types and matching (pure).
import type { IncomingMessage } from 'node:http';

export interface RequestContext {
  req: IncomingMessage;
  method: string;
  path: string;
  query: URLSearchParams;
  params: string[];
  body: unknown;
}

/** A response: JSON, raw bytes, or a stream of string chunks written with back-pressure. */
export interface Reply {
  status: number;
  json?: unknown;
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  stream?: (write: (chunk: string) => Promise<boolean>) => Promise<void>;
}

export interface Route {
  method: string;
  /** Path pattern with `:param` segments, e.g. /webhooks/:id/stats. */
  path: string;
  handler: (ctx: RequestContext) => Reply | Promise<Reply>;
  /** No bearer token required (token endpoint, /_sim/ control). */
  public?: boolean;
}

export interface CompiledRoute extends Route {
  regex: RegExp;
}

export function compile(routes: Route[]): CompiledRoute[] {
  return routes.map((r) => ({
    ...r,
    regex: new RegExp(`^${r.path.split('/').map((seg) => (seg.startsWith(':') ? '([^/]+)' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`),
  }));
}

/** Static segments win over parameters (GET /webhooks/events before GET /webhooks/:id). */
export function match(routes: CompiledRoute[], method: string, path: string): { route: CompiledRoute; params: string[] } | undefined {
  let best: { route: CompiledRoute; params: string[]; score: number } | undefined;
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.regex.exec(path);
    if (!m) continue;
    const score = route.path.split('/').filter((s) => !s.startsWith(':')).length;
    if (!best || score > best.score) best = { route, params: m.slice(1).map((p) => decodeURIComponent(p)), score };
  }
  return best && { route: best.route, params: best.params };
}

export const json = (status: number, body: unknown): Reply => ({ status, json: body });
export const noContent = (): Reply => ({ status: 204 });
