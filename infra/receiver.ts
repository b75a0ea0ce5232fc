import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import type { Logger } from '../platform/logger.ts';
import { DeliveryVerifier, VerificationFailure, missingSignatureHeaders, type SecretApi } from '../upstream/webhook-verifier.ts';
import { NotFoundError } from '../upstream/errors.ts';
import { managedWebhookId, storeEvent } from '../warehouse/webhooks/ledger.ts';
import { dispatchEvent, dispatchPending } from './webhook-dispatch.ts';

/**
 * The webhook receiver: `POST /hooks/<name>` for each webhook ddsync manages (the name of
 * DDSYNC_WEBHOOKS). A delivery is checked (size, Svix signature over the raw body, timestamp), stored
 * once per message id (a retry only counts), answered at once, and then dispatched (a
 * `transaction.updated` wakes its transaction's workflow). Events left undispatched (a crash between
 * answer and dispatch, Temporal unreachable) are dispatched again every 30 seconds.
 */
export interface ReceiverOptions {
  db: Warehouse;
  api: SecretApi;
  temporal: Client;
  log: Logger;
  host: string;
  port: number;
  maxBodyBytes: number;
  /** At most one re-fetch of a webhook's secret per this many ms (default a minute; tests: 0). */
  secretRefetchMinIntervalMs?: number;
}

export interface RunningReceiver {
  url: string;
  port: number;
  close(): Promise<void>;
}

const ROUTE = /^\/hooks\/([a-z0-9][a-z0-9-]{0,62})\/?$/;
const NAME_CACHE_MS = 30_000;
const SWEEP_EVERY_MS = 30_000;

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new BodyTooLarge());
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** 413, then the connection closes once the answer is out (not before: the sender must read it). */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  if (res.headersSent) return;
  res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ error: `body larger than ${max} bytes` }), () => req.destroy());
}

function headerMap(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
  return out;
}

export async function startReceiver(o: ReceiverOptions): Promise<RunningReceiver> {
  const verifier = new DeliveryVerifier(o.api, o.secretRefetchMinIntervalMs !== undefined ? { refetchAtMostEveryMs: o.secretRefetchMinIntervalMs } : {});
  const ids = new Map<string, { id: string | undefined; at: number }>();
  const webhookIdOf = async (name: string): Promise<string | undefined> => {
    const cached = ids.get(name);
    if (cached && Date.now() - cached.at < NAME_CACHE_MS) return cached.id;
    const id = await managedWebhookId(o.db, name);
    // Only names that exist are remembered: arbitrary names in requests must not grow the map.
    if (id) ids.set(name, { id, at: Date.now() });
    return id;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    if (req.method === 'GET' && path === '/healthz') return answer(res, 200, { ok: true });
    const route = ROUTE.exec(path);
    if (!route) return answer(res, 404, { error: `no such endpoint: ${path} (deliveries go to /hooks/<webhook name>)` });
    if (req.method !== 'POST') return answer(res, 405, { error: 'deliveries are POST requests' });
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > o.maxBodyBytes) return refuseTooLarge(req, res, o.maxBodyBytes);
    let raw: string;
    try {
      raw = await readBody(req, o.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      return refuseTooLarge(req, res, o.maxBodyBytes);
    }
    const name = route[1]!;
    const headers = headerMap(req);
    // Unsigned requests are refused before any lookup: they cost neither a query nor a cache entry.
    const missing = missingSignatureHeaders(headers);
    if (missing) return answer(res, 400, { error: missing });
    let webhookId = await webhookIdOf(name);
    if (!webhookId) return answer(res, 404, { error: `ddsync manages no webhook named "${name}"` });
    let payload: unknown;
    try {
      try {
        payload = await verifier.verify(webhookId, raw, headers);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        // The webhook was replaced at the service (deleted and created again): the name's id
        // is looked up afresh once, as the last reconciliation recorded it.
        ids.delete(name);
        verifier.forget(webhookId);
        const current = await webhookIdOf(name);
        if (!current || current === webhookId) {
          return answer(res, 503, { error: `webhook "${name}" is unknown at the service; ddsync's list of webhooks is updated by the next reconciliation` });
        }
        webhookId = current;
        payload = await verifier.verify(webhookId, raw, headers);
      }
    } catch (error) {
      if (!(error instanceof VerificationFailure)) throw error;
      o.log.warn({ webhook: name, status: error.status, reason: error.message }, 'webhook delivery refused');
      return answer(res, error.status, { error: error.message });
    }
    const msgId = (headers['svix-id'] ?? headers['webhook-id'])!;
    const timestamp = Number(headers['svix-timestamp'] ?? headers['webhook-timestamp']);
    const p = (payload ?? {}) as { event?: unknown; eventType?: unknown; data?: { id?: unknown } };
    const eventType = typeof p.event === 'string' ? p.event : typeof p.eventType === 'string' ? p.eventType : null;
    const transactionId = typeof p.data?.id === 'string' ? p.data.id : null;
    const first = await storeEvent(o.db, { msgId, webhookName: name, eventType, payload, sentAt: Number.isFinite(timestamp) ? new Date(timestamp * 1000) : null, transactionId });
    answer(res, 200, { received: true, duplicate: !first });
    if (first) {
      // After answering: the service only needs to know it arrived.
      void dispatchEvent(o.db, o.temporal, { msg_id: msgId, event_type: eventType, transaction_id: transactionId, payload }, o.log).catch(() => undefined);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      o.log.error({ err: error }, 'webhook receiver failed on a request');
      answer(res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // One pass at a time: the next is timed from the end of the last, so a slow Temporal never
  // piles passes up.
  let sweep: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = (): void => {
    void dispatchPending(o.db, o.temporal, o.log).catch(() => undefined).finally(() => {
      if (stopped) return;
      sweep = setTimeout(pass, SWEEP_EVERY_MS);
      sweep.unref();
    });
  };
  pass();
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`,
    port,
    close() {
      stopped = true;
      clearTimeout(sweep);
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
