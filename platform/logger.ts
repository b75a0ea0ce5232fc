import pino, { type Logger, type LevelWithSilent } from 'pino';
import type PinoPretty from 'pino-pretty';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { scrubSecrets, REDACTED } from './secrets.ts';

export type { Logger };
export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  level?: LevelWithSilent;
  format?: LogFormat;
  /** Where lines go; stdout by default. Tests pass a memory stream. */
  destination?: Writable;
  name?: string;
}

/** Field paths that hold secrets by name, wherever they appear one level deep. */
const SECRET_PATHS = [
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'token',
  'secret',
  'webhookSecret',
  'signingSecret',
  'password',
  'authorization',
  'apiKey',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
];
const redactPaths = [...SECRET_PATHS, ...SECRET_PATHS.map((p) => `*.${p}`)];

/**
 * JSON lines by default (for machines and log shippers), human-readable when asked or when
 * stdout is a terminal. Secrets are removed twice: by field name (pino's redact) and by value or
 * shape on the final line (scrubSecrets), so a secret inside a message or error text is caught too.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const base = {
    level: options.level ?? 'info',
    name: options.name ?? 'ddsync',
    redact: { paths: redactPaths, censor: REDACTED },
    hooks: { streamWrite: scrubSecrets },
  };
  const target = options.destination ?? process.stdout;
  if (format === 'pretty') {
    // Loaded only when asked for (synchronously: createLogger is): a worker logs JSON lines and would
    // keep pino-pretty and its dependencies in memory for nothing.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pino(
      base,
      pretty({
        destination: target,
        sync: true,
        colorize: target === process.stdout && !!process.stdout.isTTY,
        ignore: 'pid,hostname,name',
      }),
    );
  }
  return pino(base, target);
}

export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  return value === 'json' || value === 'pretty' ? value : undefined;
}
