import { z } from 'zod';
import ms, { type StringValue } from 'ms';
import { registerSecret } from './secrets.ts';
import { ConfigError } from './config-error.ts';

export { ConfigError };

/** Where survey-response PDFs are archived when DDSYNC_PDF_ARCHIVE_DIR is not set. */
export const DEFAULT_PDF_ARCHIVE_DIR = '.ddsync/pdf-archive';

/**
 * Configuration comes from environment variables only (twelve-factor; the same for the CLI, the
 * worker container and CI). Every setting is declared once here: its name, section, rule and
 * default. `loadConfig` reports every missing or malformed setting at once and never echoes a
 * value, because some of them are secrets and DATABASE_URL may carry a password.
 */
/** Every section, in the order `ddsync config` checks them: what a worker needs. */
export const SECTIONS = [
  'upstream',
  'database',
  'temporal',
  'worker',
  'refresh',
  'submission',
  'webhooks',
  'pdfs',
  'monitoring',
  'logging',
] as const;
export type Section = (typeof SECTIONS)[number];

interface Setting {
  section: Section;
  rule: string;
  schema: z.ZodType;
  secret?: boolean;
  doc: string;
}

const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);
const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const httpUrl = z.url({ protocol: /^https?$/ }).transform((v) => v.replace(/\/+$/, ''));
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/ });
const hostPort = z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/);
/** A whole number followed by ms, s, m, h or d: the one form of duration settings (ms for a fast simulator). */
const DURATION = /^\d+(ms|[smhd])$/;
/** A whole number of seconds, minutes, hours or days, at least a minute: Temporal's interval form. */
const interval = z
  .string()
  .regex(/^[1-9]\d*[smhd]$/)
  .refine((v) => durationMs(v) >= 60_000);
/** The waits of a transaction. */
const duration = z.string().regex(DURATION);
/** A threshold of `ddsync status`: a duration longer than nothing. */
const threshold = duration.refine((v) => durationMs(v) > 0);
const THRESHOLD_RULE = 'a duration above 0: a whole number followed by ms, s, m, h or d';

export const SETTINGS = {
  DDSYNC_UPSTREAM_URL: {
    section: 'upstream',
    rule: 'an http(s) URL, the service base address',
    schema: httpUrl,
    doc: 'Base URL of the due-diligence service (the simulator: http://127.0.0.1:4010).',
  },
  DDSYNC_CLIENT_ID: {
    section: 'upstream',
    rule: 'a non-empty string',
    schema: z.string().min(1),
    doc: 'Machine-to-machine client id.',
  },
  DDSYNC_CLIENT_SECRET: {
    section: 'upstream',
    rule: 'a non-empty string',
    schema: z.string().min(1),
    secret: true,
    doc: 'Machine-to-machine client secret. Never logged.',
  },
  DDSYNC_HTTP_CONCURRENCY: {
    section: 'upstream',
    rule: 'an integer from 1 to 256',
    schema: positiveInt(256).default(8),
    doc: 'Requests in flight per process.',
  },
  DDSYNC_HTTP_RATE_LIMIT: {
    section: 'upstream',
    rule: 'an integer from 0 (unlimited) to 100000',
    schema: z.coerce.number().int().min(0).max(100_000).default(0),
    doc: 'Requests per second per process; 0 = unlimited.',
  },
  DDSYNC_HTTP_TIMEOUT_MS: {
    section: 'upstream',
    rule: 'an integer from 1 to 600000',
    schema: positiveInt(600_000).default(30_000),
    doc: 'Timeout of one request, in ms.',
  },
  DDSYNC_HTTP_MAX_ATTEMPTS: {
    section: 'upstream',
    rule: 'an integer from 1 to 20',
    schema: positiveInt(20).default(6),
    doc: 'Attempts per request on 429, 5xx and network errors.',
  },
  DATABASE_URL: {
    section: 'database',
    rule: 'a postgres:// URL',
    schema: postgresUrl,
    secret: true,
    doc: 'The warehouse.',
  },
  DDSYNC_PG_POOL_SIZE: {
    section: 'database',
    rule: 'an integer from 1 to 200',
    schema: positiveInt(200).default(10),
    doc: 'Postgres connections per process.',
  },
  DDSYNC_PG_TIMEOUT_SCALE: {
    section: 'database',
    rule: 'a number from 0.001 to 100',
    schema: z.coerce.number().min(0.001).max(100).default(1),
    doc: "Scales every warehouse statement's time bound (docs/production.md, frozen warehouse): above 1 for a far slower warehouse.",
  },
  TEMPORAL_ADDRESS: {
    section: 'temporal',
    rule: 'host:port',
    schema: hostPort.default('127.0.0.1:7233'),
    doc: 'Temporal frontend (Temporal Cloud: <ns>.<acct>.tmprl.cloud:7233).',
  },
  TEMPORAL_NAMESPACE: {
    section: 'temporal',
    rule: 'a non-empty string',
    schema: z.string().min(1).default('default'),
    doc: 'Temporal namespace.',
  },
  TEMPORAL_TASK_QUEUE: {
    section: 'temporal',
    rule: 'a non-empty string',
    schema: z.string().min(1).default('ddsync'),
    doc: 'Task queue the worker polls.',
  },
  TEMPORAL_API_KEY: {
    section: 'temporal',
    rule: 'a non-empty string',
    schema: z.string().min(1).optional(),
    secret: true,
    doc: 'Temporal Cloud API key (implies TLS).',
  },
  TEMPORAL_TLS: {
    section: 'temporal',
    rule: 'true or false',
    schema: flag.optional(),
    doc: 'Use TLS to reach Temporal (default: on when an API key or client certificate is set).',
  },
  TEMPORAL_TLS_CERT_PATH: {
    section: 'temporal',
    rule: 'a file path',
    schema: z.string().min(1).optional(),
    doc: 'mTLS client certificate (PEM).',
  },
  TEMPORAL_TLS_KEY_PATH: {
    section: 'temporal',
    rule: 'a file path',
    schema: z.string().min(1).optional(),
    doc: 'mTLS client key (PEM).',
  },
  DDSYNC_WORKER_ACTIVITIES: {
    section: 'worker',
    rule: 'an integer from 1 to 1000',
    schema: positiveInt(1000).default(16),
    doc: 'Activities run at once per worker (keep near DDSYNC_PG_POOL_SIZE).',
  },
  DDSYNC_WORKER_CACHED_WORKFLOWS: {
    section: 'worker',
    rule: 'an integer from 2 to 100000',
    schema: z.coerce.number().int().min(2).max(100_000).default(1000),
    doc: 'Workflows a worker keeps in memory between their steps; one evicted is replayed from its history at its next step (a refresh keeps one per supplier being read, a bulk submission one per batch; batches started before submitBatch keep one per transaction).',
  },
  DDSYNC_TASK_QUEUE_RPS: {
    section: 'worker',
    rule: 'a positive number',
    schema: z.coerce.number().positive().optional(),
    doc: 'Activities per second across all workers of the task queue (the upstream budget).',
  },
  DDSYNC_REFRESH_INTERVAL: {
    section: 'refresh',
    rule: 'a duration of at least a minute: a whole number followed by s, m, h or d (e.g. 30m, 6h, 1d)',
    schema: interval.default('6h'),
    doc: 'How often the refresh schedule runs (`ddsync schedule apply`).',
  },
  DDSYNC_REFRESH_CONCURRENCY: {
    section: 'refresh',
    rule: 'an integer from 1 to 64',
    schema: positiveInt(64).default(4),
    doc: 'Suppliers whose plots are read at once during a refresh.',
  },
  DDSYNC_REFRESH_PAGE_ACTIVITIES: {
    section: 'refresh',
    rule: 'local or task-queue',
    schema: z.enum(['local', 'task-queue']).default('local'),
    doc: 'How page loads run: local activities in the worker of their supplier, each reading a run of up to 100 pages (faster, the default), or one ordinary activity per page, which DDSYNC_TASK_QUEUE_RPS limits across workers.',
  },
  DDSYNC_SUBMIT_CONCURRENCY: {
    section: 'submission',
    rule: 'an integer from 1 to 500',
    schema: positiveInt(500).default(20),
    doc: 'Transactions of a batch being created or submitted at once (waiting for validation holds no slot).',
  },
  DDSYNC_SUBMIT_READINESS: {
    section: 'submission',
    rule: 'one of block, warn, off',
    schema: z.enum(['block', 'warn', 'off']).default('warn'),
    doc: 'The readiness gate of `ddsync submit` (`--readiness` overrides it): `block` refuses a row whose suppliers bring plots the warehouse knows are not ready, or that passes an EU per-statement limit, before anything is sent; `warn` sends it and records the warning; `off` does not look (docs/submission.md#the-readiness-gate).',
  },
  DDSYNC_SUBMIT_MAX_DATA_AGE: {
    section: 'submission',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: '`ddsync submit` says its readiness gate judges by stale data when the last successful refresh is older than this (default: 2 × DDSYNC_REFRESH_INTERVAL), and records it with each row it lets through.',
  },
  DDSYNC_TX_FIRST_POLL: {
    section: 'submission',
    rule: 'a duration: a whole number followed by ms, s, m, h or d',
    schema: duration.default('1m'),
    doc: 'First wait after submitting a transaction before reading its status.',
  },
  DDSYNC_TX_MAX_POLL: {
    section: 'submission',
    rule: 'a duration: a whole number followed by ms, s, m, h or d',
    schema: duration.default('1h'),
    doc: "Longest wait between two reads of a transaction's status (waits double up to it).",
  },
  DDSYNC_TX_EU_WAIT: {
    section: 'submission',
    rule: 'a duration: a whole number followed by ms, s, m, h or d',
    schema: duration.default('30m'),
    doc: 'No read of a SUBMITTED transaction sooner than this after it was seen SUBMITTED (the EU system asks for 30 minutes); a webhook still wakes it.',
  },
  DDSYNC_TX_DEADLINE: {
    section: 'submission',
    rule: 'a duration: a whole number followed by ms, s, m, h or d',
    schema: duration.default('7d'),
    doc: 'A transaction without a final status after this long ends as timed_out.',
  },
  DDSYNC_TX_CREATE_SETTLE: {
    section: 'submission',
    rule: 'a duration: a whole number followed by ms, s, m, h or d',
    schema: duration.default('2m'),
    doc: 'After a create whose answer was lost and which cannot be found by its customId, how long to keep looking before creating again (longer than DDSYNC_HTTP_TIMEOUT_MS, so a slow service cannot end up with two).',
  },
  DDSYNC_WEBHOOKS: {
    section: 'webhooks',
    rule: 'a JSON array of {name, url, events?, description?, active?} (see docs/webhooks.md)',
    schema: z.string().default('[]'),
    doc: 'The webhooks ddsync keeps registered at the service (desired state).',
  },
  DDSYNC_WEBHOOKS_INTERVAL: {
    section: 'webhooks',
    rule: 'a duration of at least a minute: a whole number followed by s, m, h or d',
    schema: interval.default('1h'),
    doc: 'How often the webhooks are reconciled and their attempts and stats pulled (`ddsync schedule apply`).',
  },
  DDSYNC_RECEIVER_HOST: {
    section: 'webhooks',
    rule: 'an IP address or host name to listen on',
    schema: z.string().min(1).default('127.0.0.1'),
    doc: 'Where the webhook receiver listens (0.0.0.0 in a container).',
  },
  DDSYNC_RECEIVER_PORT: {
    section: 'webhooks',
    rule: 'an integer from 0 to 65535',
    schema: z.coerce.number().int().min(0).max(65_535).default(8787),
    doc: 'Port of the webhook receiver.',
  },
  DDSYNC_RECEIVER_MAX_BODY: {
    section: 'webhooks',
    rule: 'an integer from 1024 to 10485760 (bytes)',
    schema: z.coerce.number().int().min(1024).max(10_485_760).default(262_144),
    doc: 'Largest webhook body accepted; a larger one is refused with 413.',
  },
  DDSYNC_RECEIVER_IN_WORKER: {
    section: 'webhooks',
    rule: 'true or false',
    schema: flag.default(false),
    doc: 'Run the webhook receiver inside `ddsync worker` too.',
  },
  DDSYNC_PDF_ARCHIVE_DIR: {
    section: 'pdfs',
    rule: 'a directory path',
    schema: z.string().min(1).default(DEFAULT_PDF_ARCHIVE_DIR),
    doc: 'Where survey-response PDFs are stored, by SHA-256 (identical content stored once).',
  },
  DDSYNC_PDF_INTERVAL: {
    section: 'pdfs',
    rule: 'a duration of at least a minute: a whole number followed by s, m, h or d',
    schema: interval.default('15m'),
    doc: 'How often queued PDFs that are due are archived (`ddsync schedule apply`).',
  },
  DDSYNC_METRICS_ADDRESS: {
    section: 'monitoring',
    rule: 'host:port to listen on (port 0 = any free port)',
    schema: hostPort.optional(),
    doc: 'Where `ddsync worker` and `ddsync receiver` serve Prometheus metrics at /metrics (e.g. 0.0.0.0:9464); unset = no metrics endpoint.',
  },
  DDSYNC_READER_URL: {
    section: 'monitoring',
    rule: 'a postgres:// URL',
    schema: postgresUrl.optional(),
    secret: true,
    doc: 'A login in the read-only role ddsync_reader (docs/warehouse.md): `ddsync status` reads the warehouse with it, as BI tools do; unset = with DATABASE_URL, in a read-only transaction.',
  },
  DDSYNC_STATUS_REFRESH_WARNING: {
    section: 'monitoring',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: '`ddsync status` warns when the last successful refresh is older than this (default: 1.5 × DDSYNC_REFRESH_INTERVAL).',
  },
  DDSYNC_STATUS_REFRESH_CRITICAL: {
    section: 'monitoring',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: '`ddsync status` is critical when the last successful refresh is older than this (default: 2 × DDSYNC_REFRESH_INTERVAL).',
  },
  DDSYNC_STATUS_FAILURES: {
    section: 'monitoring',
    rule: 'an integer from 1 to 100',
    schema: positiveInt(100).default(3),
    doc: '`ddsync status` is critical when refreshes, or the reads of one supplier, failed this many times in a row (one is a warning), and warns when a step of a transaction did.',
  },
  DDSYNC_STATUS_TX_WARNING: {
    section: 'monitoring',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: "`ddsync status` warns when a transaction has waited longer for a final status (default: the EU system's 90 minutes + DDSYNC_TX_EU_WAIT + DDSYNC_TX_MAX_POLL, 3h).",
  },
  DDSYNC_STATUS_TX_CRITICAL: {
    section: 'monitoring',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: '`ddsync status` is critical when a transaction has waited longer for a final status (default: 1d, or half of DDSYNC_TX_DEADLINE when that is shorter).',
  },
  DDSYNC_STATUS_PDF_OVERDUE: {
    section: 'monitoring',
    rule: THRESHOLD_RULE,
    schema: threshold.optional(),
    doc: '`ddsync status` warns when a queued PDF has been due this long without an archive run taking it (default: 2 × DDSYNC_PDF_INTERVAL).',
  },
  DDSYNC_LOG_LEVEL: {
    section: 'logging',
    rule: 'one of fatal, error, warn, info, debug, trace, silent',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    doc: 'Log level.',
  },
  DDSYNC_LOG_FORMAT: {
    section: 'logging',
    rule: 'json or pretty',
    schema: z.enum(['json', 'pretty']).optional(),
    doc: 'Log format (default: pretty on a terminal, JSON otherwise).',
  },
} satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;
export type SettingName = keyof Settings;
type Values = { [K in SettingName]: z.output<Settings[K]['schema']> };

/** Optional settings without a default may be absent; required ones must be present. */
function isRequired(setting: Setting): boolean {
  return !setting.schema.safeParse(undefined).success;
}

export function loadConfig(sections: Section[], env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as Array<[SettingName, Setting]>) {
    if (!sections.includes(setting.section)) continue;
    const raw = env[name];
    const given = raw === undefined || raw.trim() === '' ? undefined : raw.trim();
    if (given === undefined && isRequired(setting)) {
      problems.push(`${name} is required: ${setting.rule}`);
      continue;
    }
    const parsed = setting.schema.safeParse(given);
    if (!parsed.success) {
      problems.push(`${name} is malformed: expected ${setting.rule}`);
      continue;
    }
    if (setting.secret && typeof given === 'string') registerSecret(given);
    values[name] = parsed.data;
  }
  if ((values.TEMPORAL_TLS_CERT_PATH === undefined) !== (values.TEMPORAL_TLS_KEY_PATH === undefined)) {
    problems.push('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together: set both or neither');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return toConfig(values as Partial<Values>);
}

export interface Config {
  upstream?: {
    baseUrl: string;
    clientId: string;
    clientSecret: string;
    concurrency: number;
    ratePerSecond: number;
    timeoutMs: number;
    maxAttempts: number;
  };
  database?: { url: string; poolSize: number; timeoutScale: number };
  temporal?: {
    address: string;
    namespace: string;
    taskQueue: string;
    apiKey?: string;
    tls: boolean;
    tlsCertPath?: string;
    tlsKeyPath?: string;
  };
  worker?: { maxConcurrentActivities: number; cachedWorkflows: number; taskQueueActivitiesPerSecond?: number };
  refresh?: { interval: string; supplierConcurrency: number; pageActivities: 'local' | 'task-queue' };
  submission?: {
    concurrency: number;
    readiness: 'block' | 'warn' | 'off';
    /** Unset: 2 × the refresh interval (readinessMaxDataAgeMs). */
    maxDataAgeMs?: number;
    timing: { firstPollMs: number; maxPollMs: number; euWaitMs: number; deadlineMs: number; createSettleMs: number };
  };
  webhooks?: {
    desired: string;
    interval: string;
    receiver: { host: string; port: number; maxBodyBytes: number; inWorker: boolean };
  };
  pdfs?: { archiveDir: string; interval: string };
  monitoring?: {
    metricsAddress?: string;
    /** A login in ddsync_reader for `ddsync status`. */
    readerUrl?: string;
    /** `ddsync status`'s thresholds as set; an unset one is derived from the other settings (cli/status/thresholds.ts). */
    status: {
      refreshWarningMs?: number;
      refreshCriticalMs?: number;
      failuresInARow: number;
      txWarningMs?: number;
      txCriticalMs?: number;
      pdfOverdueMs?: number;
    };
  };
  logging?: { level: Values['DDSYNC_LOG_LEVEL']; format?: Values['DDSYNC_LOG_FORMAT'] };
}

function toConfig(v: Partial<Values>): Config {
  const config: Config = {};
  if (v.DDSYNC_UPSTREAM_URL !== undefined) {
    config.upstream = {
      baseUrl: v.DDSYNC_UPSTREAM_URL,
      clientId: v.DDSYNC_CLIENT_ID!,
      clientSecret: v.DDSYNC_CLIENT_SECRET!,
      concurrency: v.DDSYNC_HTTP_CONCURRENCY!,
      ratePerSecond: v.DDSYNC_HTTP_RATE_LIMIT!,
      timeoutMs: v.DDSYNC_HTTP_TIMEOUT_MS!,
      maxAttempts: v.DDSYNC_HTTP_MAX_ATTEMPTS!,
    };
  }
  if (v.DATABASE_URL !== undefined)
    config.database = {
      url: v.DATABASE_URL,
      poolSize: v.DDSYNC_PG_POOL_SIZE!,
      timeoutScale: v.DDSYNC_PG_TIMEOUT_SCALE!,
    };
  if (v.TEMPORAL_ADDRESS !== undefined) {
    const mtls = v.TEMPORAL_TLS_CERT_PATH !== undefined;
    config.temporal = {
      address: v.TEMPORAL_ADDRESS,
      namespace: v.TEMPORAL_NAMESPACE!,
      taskQueue: v.TEMPORAL_TASK_QUEUE!,
      apiKey: v.TEMPORAL_API_KEY,
      tls: v.TEMPORAL_TLS ?? (v.TEMPORAL_API_KEY !== undefined || mtls),
      tlsCertPath: v.TEMPORAL_TLS_CERT_PATH,
      tlsKeyPath: v.TEMPORAL_TLS_KEY_PATH,
    };
  }
  if (v.DDSYNC_WORKER_ACTIVITIES !== undefined) {
    config.worker = {
      maxConcurrentActivities: v.DDSYNC_WORKER_ACTIVITIES,
      cachedWorkflows: v.DDSYNC_WORKER_CACHED_WORKFLOWS!,
      taskQueueActivitiesPerSecond: v.DDSYNC_TASK_QUEUE_RPS,
    };
  }
  if (v.DDSYNC_REFRESH_INTERVAL !== undefined)
    config.refresh = {
      interval: v.DDSYNC_REFRESH_INTERVAL,
      supplierConcurrency: v.DDSYNC_REFRESH_CONCURRENCY!,
      pageActivities: v.DDSYNC_REFRESH_PAGE_ACTIVITIES!,
    };
  if (v.DDSYNC_SUBMIT_CONCURRENCY !== undefined) {
    config.submission = {
      concurrency: v.DDSYNC_SUBMIT_CONCURRENCY,
      readiness: v.DDSYNC_SUBMIT_READINESS!,
      maxDataAgeMs: v.DDSYNC_SUBMIT_MAX_DATA_AGE === undefined ? undefined : durationMs(v.DDSYNC_SUBMIT_MAX_DATA_AGE),
      timing: {
        firstPollMs: durationMs(v.DDSYNC_TX_FIRST_POLL!),
        maxPollMs: durationMs(v.DDSYNC_TX_MAX_POLL!),
        euWaitMs: durationMs(v.DDSYNC_TX_EU_WAIT!),
        deadlineMs: durationMs(v.DDSYNC_TX_DEADLINE!),
        createSettleMs: durationMs(v.DDSYNC_TX_CREATE_SETTLE!),
      },
    };
  }
  if (v.DDSYNC_WEBHOOKS !== undefined) {
    config.webhooks = {
      desired: v.DDSYNC_WEBHOOKS,
      interval: v.DDSYNC_WEBHOOKS_INTERVAL!,
      receiver: {
        host: v.DDSYNC_RECEIVER_HOST!,
        port: v.DDSYNC_RECEIVER_PORT!,
        maxBodyBytes: v.DDSYNC_RECEIVER_MAX_BODY!,
        inWorker: v.DDSYNC_RECEIVER_IN_WORKER!,
      },
    };
  }
  if (v.DDSYNC_PDF_ARCHIVE_DIR !== undefined)
    config.pdfs = { archiveDir: v.DDSYNC_PDF_ARCHIVE_DIR, interval: v.DDSYNC_PDF_INTERVAL! };
  // Every monitoring setting is optional or defaulted, so the section is always there when asked for.
  if ('DDSYNC_METRICS_ADDRESS' in v) {
    const ms = (text: string | undefined) => (text === undefined ? undefined : durationMs(text));
    config.monitoring = {
      metricsAddress: v.DDSYNC_METRICS_ADDRESS,
      readerUrl: v.DDSYNC_READER_URL,
      status: {
        refreshWarningMs: ms(v.DDSYNC_STATUS_REFRESH_WARNING),
        refreshCriticalMs: ms(v.DDSYNC_STATUS_REFRESH_CRITICAL),
        failuresInARow: v.DDSYNC_STATUS_FAILURES!,
        txWarningMs: ms(v.DDSYNC_STATUS_TX_WARNING),
        txCriticalMs: ms(v.DDSYNC_STATUS_TX_CRITICAL),
        pdfOverdueMs: ms(v.DDSYNC_STATUS_PDF_OVERDUE),
      },
    };
  }
  if (v.DDSYNC_LOG_LEVEL !== undefined) config.logging = { level: v.DDSYNC_LOG_LEVEL, format: v.DDSYNC_LOG_FORMAT };
  return config;
}

/**
 * Milliseconds of a duration like 200ms, 30m or 6h, read by `ms`: the parser the Temporal SDK applies
 * to the durations ddsync hands it (schedule intervals), so both read them alike. `ms` reads more
 * ("1.5h", "6 hours", a bare "60" as milliseconds); the settings' rule is the narrower form, NaN otherwise.
 */
export function durationMs(text: string): number {
  return DURATION.test(text) ? ms(text as StringValue) : Number.NaN;
}
