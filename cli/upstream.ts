import { createUpstreamClient, type UpstreamClient } from '../activities/api/index.ts';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/logger.ts';

/** The upstream client as configured by DDSYNC_* settings: one per process. */
export function createUpstreamFromConfig(config: NonNullable<Config['upstream']>, log: Logger): UpstreamClient {
  return createUpstreamClient({
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
