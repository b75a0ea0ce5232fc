import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { Client } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import { bodyLimit } from '../platform/body-limit.ts';
import { WEBHOOK_NAME_PATTERN } from '../schema/desired-webhooks.ts';
import type { Logger } from '../platform/logger.ts';
import {
  DeliveryVerifier,
  VerificationFailure,
  missingSignatureHeaders,
  type SecretApi,
} from '../upstream/webhook-verifier.ts';
import { NotFoundError } from '../upstream/errors.ts';
import { managedWebhookId, storeEvent } from '../warehouse/webhooks/ledger.ts';
import { dispatchEvent, dispatchPending } from './webhook-dispatch.ts';
import { Outage } from '../platform/outage.ts';
import { classifyWarehouseError } from '../warehouse/connection-errors.ts';

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
  /**
   * Told when the warehouse cannot be used at all (credentials refused, its schema broken): deliveries
   * are answered 503 meanwhile (the service sends them again), and the process should stop, loudly.
   */
  onWarehouseFatal?: (reason: string) => void;
  /** The process's record of warehouse outages (a worker's, when the receiver runs in it); its own otherwise. */
  warehouseOutage?: Outage;
  /** Told of every delivery answered: accepted (new, duplicate) or rejected with a reason (the metrics). */
  onDelivery?: (outcome: 'accepted' | 'rejected', reason: DeliveryReason) => void;
}

/** Why a delivery was answered as it was: a bounded set, for the metrics. */
export type DeliveryReason =
  | 'new'
  | 'duplicate'
  | 'unsigned'
  | 'bad_signature'
  | 'malformed'
  | 'unknown_webhook'
  | 'unknown_at_service'
  | 'too_large'
  | 'method'
  | 'warehouse_unavailable'
  | 'warehouse_fatal'
  | 'internal';

export interface RunningReceiver {
  url: string;
  port: number;
  close(): Promise<void>;
}

const NAME_CACHE_MS = 30_000;
/** What a delivery refused while the warehouse is away asks the sender to wait. */
const RETRY_AFTER_SECONDS = 5;
const SWEEP_EVERY_MS = 30_000;

type Env = { Bindings: HttpBindings; Variables: { reason: DeliveryReason } };

/** A reason from the status when the handler set none (answers made by middleware). */
function reasonOfStatus(status: number): DeliveryReason {
  if (status === 413) return 'too_large';
  if (status === 405) return 'method';
  if (status === 400) return 'malformed';
  if (status === 401) return 'bad_signature';
  if (status === 404) return 'unknown_webhook';
  if (status === 503) return 'warehouse_unavailable';
  return 'internal';
}

export async function startReceiver(o: ReceiverOptions): Promise<RunningReceiver> {
  const warehouseOutage = o.warehouseOutage ?? new Outage({ name: 'the warehouse', log: o.log });
  const temporalOutage = new Outage({ name: 'Temporal', log: o.log });
  const verifier = new DeliveryVerifier(
    o.api,
    o.secretRefetchMinIntervalMs !== undefined ? { refetchAtMostEveryMs: o.secretRefetchMinIntervalMs } : {},
  );
  const ids = new Map<string, { id: string | undefined; at: number }>();
  const webhookIdOf = async (name: string): Promise<string | undefined> => {
    const cached = ids.get(name);
    if (cached && Date.now() - cached.at < NAME_CACHE_MS) return cached.id;
    const id = await managedWebhookId(o.db, name);
    // Only names that exist are remembered: arbitrary names in requests must not grow the map.
    if (id) ids.set(name, { id, at: Date.now() });
    return id;
  };

  const app = new Hono<Env>({ strict: false });
  app.get('/healthz', (c) => c.json({ ok: true }));
  const hook = `/hooks/:name{${WEBHOOK_NAME_PATTERN}}`;
  if (o.onDelivery) {
    const told = o.onDelivery;
    app.use(hook, async (c, next) => {
      await next();
      const ok = c.res.status >= 200 && c.res.status < 300;
      told(ok ? 'accepted' : 'rejected', c.get('reason') ?? (ok ? 'new' : reasonOfStatus(c.res.status)));
    });
  }
  // 413 before the rest of the body is read; the connection then closes once the answer is out
  // (not before: the sender must read it).
  const tooLarge = bodyLimit({
    maxSize: o.maxBodyBytes,
    onError: (c) => c.json({ error: `body larger than ${o.maxBodyBytes} bytes` }, 413, { connection: 'close' }),
  });
  app.post(hook, tooLarge, async (c) => {
    // Bytes as sent, decoded as they are signed (Request.text() would drop a leading BOM).
    const raw = Buffer.from(await c.req.arrayBuffer()).toString('utf8');
    const name = c.req.param('name');
    const headers = c.req.header();
    // Unsigned requests are refused before any lookup: they cost neither a query nor a cache entry.
    const missing = missingSignatureHeaders(headers);
    if (missing) {
      c.set('reason', 'unsigned');
      return c.json({ error: missing }, 400);
    }
    let webhookId = await webhookIdOf(name);
    if (!webhookId) return c.json({ error: `ddsync manages no webhook named "${name}"` }, 404);
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
          c.set('reason', 'unknown_at_service');
          return c.json(
            {
              error: `webhook "${name}" is unknown at the service; ddsync's list of webhooks is updated by the next reconciliation`,
            },
            503,
          );
        }
        webhookId = current;
        payload = await verifier.verify(webhookId, raw, headers);
      }
    } catch (error) {
      if (!(error instanceof VerificationFailure)) throw error;
      o.log.warn({ webhook: name, status: error.status, reason: error.message }, 'webhook delivery refused');
      c.set('reason', error.status === 401 ? 'bad_signature' : 'malformed');
      return c.json({ error: error.message }, error.status);
    }
    const msgId = (headers['svix-id'] ?? headers['webhook-id'])!;
    const timestamp = Number(headers['svix-timestamp'] ?? headers['webhook-timestamp']);
    const p = (payload ?? {}) as { event?: unknown; eventType?: unknown; data?: { id?: unknown } };
    const eventType = typeof p.event === 'string' ? p.event : typeof p.eventType === 'string' ? p.eventType : null;
    const transactionId = typeof p.data?.id === 'string' ? p.data.id : null;
    const sent = warehouseOutage.mark();
    const first = await storeEvent(o.db, {
      msgId,
      webhookName: name,
      eventType,
      payload,
      sentAt: Number.isFinite(timestamp) ? new Date(timestamp * 1000) : null,
      transactionId,
    });
    warehouseOutage.recovered(sent);
    if (first) {
      // Not awaited: the answer goes out at once; the service only needs to know it arrived.
      void dispatchEvent(
        o.db,
        o.temporal,
        { msg_id: msgId, event_type: eventType, transaction_id: transactionId, payload },
        o.log,
        temporalOutage,
      ).catch(() => undefined);
    }
    c.set('reason', first ? 'new' : 'duplicate');
    return c.json({ received: true, duplicate: !first });
  });
  app.all(hook, (c) => c.json({ error: 'deliveries are POST requests' }, 405));
  app.notFound((c) =>
    c.json({ error: `no such endpoint: ${c.req.path} (deliveries go to /hooks/<webhook name>)` }, 404),
  );
  app.onError((error, c) => {
    // The warehouse away (restart, failover, read-only, connections exhausted): the delivery is not
    // stored, so it is refused with 503 and the service delivers it again later (Svix retries for
    // days); one log line per outage, not one per delivery.
    const trouble = classifyWarehouseError(error);
    if (trouble?.kind === 'fatal') {
      o.log.error({ reason: trouble.reason }, `the warehouse cannot be used: ${trouble.reason}`);
      o.onWarehouseFatal?.(trouble.reason);
      c.set('reason', 'warehouse_fatal');
      return c.json({ error: 'the warehouse cannot be used; deliver again later' }, 503);
    }
    if (trouble) {
      warehouseOutage.failed(trouble.reason, 'deliveries are refused with 503 and the service sends them again');
      c.set('reason', 'warehouse_unavailable');
      return c.json({ error: 'the warehouse is unavailable; deliver again later' }, 503, {
        'retry-after': String(RETRY_AFTER_SECONDS),
      });
    }
    o.log.error({ err: error }, 'webhook receiver failed on a request');
    c.set('reason', 'internal');
    return c.json({ error: 'internal error' }, 500);
  });

  // The globals stay Node's own: the receiver may share its process with the worker's fetch.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
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
    void dispatchPending(o.db, o.temporal, o.log, temporalOutage)
      .catch(() => undefined)
      .finally(() => {
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
