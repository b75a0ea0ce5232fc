import { Webhook, WebhookVerificationError } from 'svix';
import type { UpstreamClient } from './index.ts';

/**
 * Checks that a delivery comes from the service: the Svix scheme (svix-* or webhook-* headers; the
 * HMAC over id, timestamp and the raw body; any of several signatures during a secret rotation; a
 * timestamp within 5 minutes), with the webhook's secret fetched from the service and kept in memory
 * only. When a signature does not match, the secret is fetched once more (it may have been rotated)
 * before the delivery is refused; at most once a minute per webhook, so forged requests cannot make
 * ddsync hammer the service.
 */
export class VerificationFailure extends Error {
  override name = 'VerificationFailure';
  constructor(
    readonly status: 400 | 401 | 404,
    message: string,
  ) {
    super(message);
  }
}

export type SecretApi = Pick<UpstreamClient, 'getWebhookSecret'>;

/** The longest a delivery waits for its webhook's secret to be fetched. */
const SECRET_FETCH_BUDGET_MS = 10_000;

interface Known {
  secret: string;
  fetchedAt: number;
}

const REFETCH_AT_MOST_EVERY_MS = 60_000;

export interface VerifierOptions {
  /** At most one re-fetch of a secret per this many ms (default a minute). */
  refetchAtMostEveryMs?: number;
  now?: () => number;
}

/** Why a request cannot be a signed delivery (a Svix header missing), or undefined. */
export function missingSignatureHeaders(headers: Record<string, string | undefined>): string | undefined {
  const present = (a: string, b: string) => headers[a] ?? headers[b];
  if (
    present('svix-id', 'webhook-id') &&
    present('svix-timestamp', 'webhook-timestamp') &&
    present('svix-signature', 'webhook-signature')
  )
    return undefined;
  return 'missing svix-id / svix-timestamp / svix-signature (or webhook-*) headers';
}

export class DeliveryVerifier {
  readonly #secrets = new Map<string, Known>();
  readonly #inflight = new Map<string, Promise<Known>>();
  readonly #refetchEvery: number;
  readonly #now: () => number;

  constructor(
    private readonly api: SecretApi,
    options: VerifierOptions = {},
  ) {
    this.#refetchEvery = options.refetchAtMostEveryMs ?? REFETCH_AT_MOST_EVERY_MS;
    this.#now = options.now ?? Date.now;
  }

  /** The verified, parsed message; throws VerificationFailure with the status to answer. */
  async verify(webhookId: string, rawBody: string, headers: Record<string, string | undefined>): Promise<unknown> {
    const missing = missingSignatureHeaders(headers);
    if (missing) throw new VerificationFailure(400, missing);
    let known = this.#secrets.get(webhookId) ?? (await this.#fetch(webhookId));
    try {
      return this.#check(known.secret, rawBody, headers);
    } catch (error) {
      if (
        !(error instanceof VerificationFailure) ||
        error.message !== 'no matching signature' ||
        this.#now() - known.fetchedAt < this.#refetchEvery
      )
        throw error;
      // The secret may have been rotated since it was fetched: one more look before refusing.
      known = await this.#fetch(webhookId);
      return this.#check(known.secret, rawBody, headers);
    }
  }

  #check(secret: string, rawBody: string, headers: Record<string, string | undefined>): unknown {
    try {
      return new Webhook(secret).verify(rawBody, headers as Record<string, string>);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (/timestamp too old|timestamp too new/i.test(error.message))
        throw new VerificationFailure(401, `timestamp more than 5 minutes from now (${error.message.toLowerCase()})`);
      if (/no matching signature/i.test(error.message)) throw new VerificationFailure(401, 'no matching signature');
      throw new VerificationFailure(400, error.message);
    }
  }

  /** Drops what is known of a webhook (it no longer exists at the service). */
  forget(webhookId: string): void {
    this.#secrets.delete(webhookId);
  }

  /** One fetch per webhook at a time: concurrent deliveries share it. */
  #fetch(webhookId: string): Promise<Known> {
    let pending = this.#inflight.get(webhookId);
    if (!pending) {
      // Bounded, retries included: the service gives a delivery 15 s, and a delivery answered late
      // is retried by it anyway (and then counted, not stored twice).
      pending = this.api
        .getWebhookSecret(webhookId, { signal: AbortSignal.timeout(SECRET_FETCH_BUDGET_MS) })
        .then((secret) => {
          const known = { secret, fetchedAt: this.#now() };
          this.#secrets.set(webhookId, known);
          return known;
        })
        .finally(() => this.#inflight.delete(webhookId));
      this.#inflight.set(webhookId, pending);
    }
    return pending;
  }
}
