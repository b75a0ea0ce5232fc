import { createUpstreamClient, NetworkError, type UpstreamClient, type UpstreamObserver } from '../upstream/index.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import { ConnectionFailedError, networkReason, upstreamEndpoint } from '../infra/connection-failure.ts';

/** The upstream client as configured by DDSYNC_* settings: one per process. */
export function createUpstreamFromConfig(
  config: NonNullable<Config['upstream']>,
  log: Logger,
  observer?: UpstreamObserver,
): UpstreamClient {
  return createUpstreamClient({
    ...(observer ? { observer } : {}),
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    logger: log.child({ component: 'upstream' }),
    concurrency: config.concurrency,
    ...(config.ratePerSecond > 0 ? { intervalCap: config.ratePerSecond, intervalMs: 1_000 } : {}),
    timeoutMs: config.timeoutMs,
    maxAttempts: config.maxAttempts,
  });
}

/**
 * The client of a one-shot command, with its token: the token call is the command's first request
 * anyway, and when the service cannot be reached the command says where it looked and what to do.
 */
export async function connectUpstream(config: NonNullable<Config['upstream']>, log: Logger): Promise<UpstreamClient> {
  const api = createUpstreamFromConfig(config, log);
  try {
    await api.authenticate();
  } catch (error) {
    if (error instanceof NetworkError) {
      const reason = error.cause ? networkReason(error.cause) : error.message;
      throw new ConnectionFailedError(
        upstreamEndpoint(config.baseUrl),
        `${reason}, after ${config.maxAttempts} attempt${config.maxAttempts === 1 ? '' : 's'}`,
        false,
        error,
      );
    }
    throw error;
  }
  return api;
}
