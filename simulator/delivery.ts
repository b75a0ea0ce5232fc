// Svix-style delivery: signed POSTs, retried on Svix's schedule (scaled), one message id across
// retries, each attempt recorded. `resolve` maps a public host name to a local host:port.
import http from 'node:http';
import https from 'node:https';
import { Webhook as SvixWebhook } from 'svix';
import type { Timers } from './timers.ts';
import type { Attempt, Message, Webhook, WebhookStore } from './webhooks.ts';

/** Delay before each attempt, simulated ms: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** Real-time response deadline; not scaled, so a real receiver has its full 15 s. */
const RESPONSE_TIMEOUT_MS = 15_000;

export interface DeliveryDeps {
  store: WebhookStore;
  timers: Timers;
  resolve: Record<string, string>;
  log: (line: string) => void;
}

export class DeliveryService {
  private inFlight = new Set<http.ClientRequest>();
  private counter = 0;
  private closed = false;

  constructor(private deps: DeliveryDeps) {}

  /** Queues a message for one webhook; returns its message id. */
  send(hook: Webhook, eventType: string, payload: Record<string, unknown>): string {
    const msg: Message = {
      id: `msg_${Date.now().toString(36)}${(this.counter++).toString(36).padStart(6, '0')}`,
      eventType,
      payload,
      timestamp: new Date().toISOString(),
    };
    this.deps.timers.after(RETRY_SCHEDULE_MS[0] ?? 0, () => void this.attempt(hook, msg, 0));
    return msg.id;
  }

  /** Sends to every active webhook subscribed to the event. */
  broadcast(eventType: string, payload: Record<string, unknown>): void {
    for (const hook of this.deps.store.list()) {
      if (hook.isActive && hook.events.includes(eventType)) this.send(hook, eventType, payload);
    }
  }

  private async attempt(hook: Webhook, msg: Message, n: number): Promise<void> {
    if (this.closed) return;
    const body = JSON.stringify(msg.payload);
    const now = new Date();
    const signature = this.deps.store
      .signingSecrets(hook)
      .map((s) => new SvixWebhook(s).sign(msg.id, now, body))
      .join(' ');
    const headers = {
      'content-type': 'application/json',
      'svix-id': msg.id,
      'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
      'svix-signature': signature,
    };
    const result = await this.post(hook.url, headers, body);
    if (this.closed) return;
    const ok = result.status >= 200 && result.status < 300;
    const attempt: Attempt = {
      id: `atmpt_${msg.id.slice(4)}_${n}`,
      msgId: msg.id,
      url: hook.url,
      response: result.body.slice(0, 1000),
      responseStatusCode: result.status,
      status: ok ? 'SUCCESS' : 'FAIL',
      timestamp: now.toISOString(),
      msg,
    };
    this.deps.store.record(hook.id, attempt);
    this.deps.log(`webhook ${hook.id} ${msg.eventType} ${msg.id} attempt ${n + 1}: ${result.status || 'no response'}`);
    const next = RETRY_SCHEDULE_MS[n + 1];
    if (!ok && next !== undefined) this.deps.timers.after(next, () => void this.attempt(hook, msg, n + 1));
  }

  private post(
    target: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolvePromise) => {
      const url = new URL(target);
      const mapped = this.deps.resolve[url.hostname];
      const transport = mapped || url.protocol === 'http:' ? http : https;
      const [host, port] = mapped
        ? [mapped.slice(0, mapped.lastIndexOf(':')), mapped.slice(mapped.lastIndexOf(':') + 1)]
        : [url.hostname, url.port];
      const req = transport.request({
        host,
        port: port || undefined,
        method: 'POST',
        path: url.pathname + url.search,
        agent: false,
        headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)), connection: 'close' },
      });
      this.inFlight.add(req);
      let settled = false;
      const done = (status: number, text: string): void => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(req);
        resolvePromise({ status, body: text });
      };
      req.setTimeout(RESPONSE_TIMEOUT_MS, () => {
        req.destroy();
        done(0, 'timeout after 15 s');
      });
      req.on('error', (error) => done(0, error.message));
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < 4000) text += chunk;
        });
        res.on('end', () => done(res.statusCode ?? 0, text));
        res.on('error', (error) => done(0, error.message));
      });
      req.end(body);
    });
  }

  close(): void {
    this.closed = true;
    for (const req of this.inFlight) req.destroy();
    this.inFlight.clear();
  }
}
