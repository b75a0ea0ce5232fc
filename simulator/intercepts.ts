// Control-only interceptions of chosen requests (tests and demos): answer a status, cut the connection,
// hold a request before or after it is handled, or handle it and lose its answer. Without a rule the
// service behaves as always; rules are set only through the control API, never by a request.
import { STATUS_CODES } from 'node:http';

export const INTERCEPT_ACTIONS = ['status', 'reset', 'holdRequest', 'holdResponse', 'dropResponse'] as const;
export type InterceptAction = (typeof INTERCEPT_ACTIONS)[number];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface InterceptRule {
  /** GET, POST, PUT, PATCH or DELETE. */
  method: string;
  /** A route pattern as the service's routes are written (`/transactions/:id`) or a concrete path (`/transactions/tx-1`). */
  path: string;
  /** How many matching requests the rule takes (default 1). */
  times?: number;
  /** Only requests whose JSON body has these top-level values (e.g. `{customId: "k-1"}`). */
  body?: Record<string, string | number | boolean>;
  /**
   * status: answer `status` without handling the request (not applied); reset: cut the connection
   * without handling it; holdRequest: hold it unhandled until released (applied then);
   * holdResponse: handle it now, hold its answer until released; dropResponse: handle it, then cut
   * the connection (applied, the answer lost).
   */
  action: InterceptAction;
  /** With action status: 400–599. */
  status?: number;
  /** With status 429 or 503: the Retry-After header, seconds. */
  retryAfterSeconds?: number;
}

/** A rule as stored: every field resolved. */
export type ActiveRule = Required<Omit<InterceptRule, 'status' | 'retryAfterSeconds' | 'body'>> &
  Pick<InterceptRule, 'status' | 'retryAfterSeconds' | 'body'>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a rule; throws an Error whose message lists each bad field and its rule. */
export function parseInterceptRule(input: unknown): ActiveRule {
  if (!isObject(input)) throw new Error('the rule must be a JSON object');
  const problems: string[] = [];
  const known = new Set(['method', 'path', 'times', 'body', 'action', 'status', 'retryAfterSeconds']);
  for (const key of Object.keys(input))
    if (!known.has(key)) problems.push(`${key} is not a rule field (known: ${[...known].join(', ')})`);
  const { method, path, times = 1, body, action, status, retryAfterSeconds } = input;
  if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method.toUpperCase()))
    problems.push(`method must be one of ${METHODS.join(', ')}`);
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('/_sim/'))
    problems.push('path must be a string starting with / (a service path, not a /_sim/ one)');
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 1)
    problems.push('times must be a positive integer');
  if (
    body !== undefined &&
    (!isObject(body) || !Object.values(body).every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
  )
    problems.push('body must be an object whose values are strings, numbers or booleans');
  if (typeof action !== 'string' || !(INTERCEPT_ACTIONS as readonly string[]).includes(action))
    problems.push(`action must be one of ${INTERCEPT_ACTIONS.join(', ')}`);
  if (action === 'status') {
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599)
      problems.push('status must be an integer from 400 to 599 (with action status)');
  } else if (status !== undefined) problems.push('status is allowed only with action status');
  if (retryAfterSeconds !== undefined) {
    if (typeof retryAfterSeconds !== 'number' || !Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0)
      problems.push('retryAfterSeconds must be a non-negative integer');
    else if (action !== 'status' || (status !== 429 && status !== 503))
      problems.push('retryAfterSeconds is allowed only with action status and status 429 or 503');
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  const rule: ActiveRule = {
    method: (method as string).toUpperCase(),
    path: path as string,
    times: times as number,
    action: action as InterceptAction,
  };
  if (body !== undefined) rule.body = { ...(body as Record<string, string | number | boolean>) };
  if (status !== undefined) rule.status = status as number;
  if (retryAfterSeconds !== undefined) rule.retryAfterSeconds = retryAfterSeconds as number;
  return rule;
}

/** The answer of an action status rule: the service's error shape, marked as simulated. */
export function interceptedAnswer(rule: ActiveRule): {
  status: number;
  message: string;
  headers: Record<string, string>;
} {
  const status = rule.status ?? 500;
  const headers: Record<string, string> =
    rule.retryAfterSeconds === undefined ? {} : { 'retry-after': String(rule.retryAfterSeconds) };
  return { status, message: `${STATUS_CODES[status] ?? 'Error'} (simulated)`, headers };
}

/** What a held request does once the hold ends: go on, or have its connection cut unanswered. */
export type HoldEnd = 'release' | 'discard';

interface Held {
  end: (how: HoldEnd) => void;
  /** Resolves once the request was handled (or discarded). */
  handled: Promise<void>;
}

export class Intercepts {
  private rules: ActiveRule[] = [];
  private held: Held[] = [];
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  private counts = new Map<string, number>();

  add(rule: ActiveRule): ActiveRule {
    this.rules.push({ ...rule });
    return rule;
  }

  clear(): void {
    this.rules = [];
  }

  /** Counts a request that reached a service route, by method and route pattern. */
  count(method: string, pattern: string): void {
    const key = `${method} ${pattern}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  requestCounts(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /** The first rule matching the request takes it (one of its `times`); undefined when none does. */
  take(method: string, path: string, pattern: string, body: () => unknown): ActiveRule | undefined {
    if (this.rules.length === 0) return undefined;
    const at = this.rules.findIndex((r) => {
      if (r.method !== method || (r.path !== path && r.path !== pattern)) return false;
      if (!r.body) return true;
      const actual = body();
      return isObject(actual) && Object.entries(r.body).every(([k, v]) => actual[k] === v);
    });
    if (at < 0) return undefined;
    const rule = this.rules[at]!;
    if (--rule.times === 0) this.rules.splice(at, 1);
    return rule;
  }

  /**
   * Holds a request until release() or discard(); `handled` is to be called once the service has
   * handled it (a request held after handling: at once).
   */
  hold(): { ended: Promise<HoldEnd>; handled: () => void } {
    let end: (how: HoldEnd) => void = () => undefined;
    let handled: () => void = () => undefined;
    const ended = new Promise<HoldEnd>((resolve) => {
      end = resolve;
    });
    const done = new Promise<void>((resolve) => {
      handled = resolve;
    });
    this.held.push({ end, handled: done });
    for (const w of this.waiters.filter((w) => this.held.length >= w.n)) {
      w.resolve();
      this.waiters.splice(this.waiters.indexOf(w), 1);
    }
    return { ended, handled };
  }

  heldCount(): number {
    return this.held.length;
  }

  /** Resolves once at least `n` requests are held. */
  whenHeld(n: number): Promise<void> {
    if (this.held.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** Lets every held request go on; resolves with their number once each was handled. */
  async release(): Promise<number> {
    const held = this.held;
    this.held = [];
    for (const h of held) h.end('release');
    await Promise.all(held.map((h) => h.handled));
    return held.length;
  }

  /** Cuts the connection of every held request, unhandled ones never applied (reset, close). */
  discard(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) h.end('discard');
  }

  reset(): void {
    this.discard();
    this.rules = [];
    this.counts.clear();
  }
}
