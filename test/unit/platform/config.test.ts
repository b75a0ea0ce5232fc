import { describe, it, expect } from 'vitest';
import { loadConfig, ConfigError, SECTIONS, SETTINGS } from '../../../platform/config.ts';

const ALL = SECTIONS;
const valid = {
  DDSYNC_UPSTREAM_URL: 'http://127.0.0.1:4010/',
  DDSYNC_CLIENT_ID: 'ddsync-demo',
  DDSYNC_CLIENT_SECRET: 'super-secret-value',
  DATABASE_URL: 'postgres://app:db-password-123@db:5432/warehouse',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig([...ALL], env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('applies defaults and normalises the base URL', () => {
    const config = loadConfig([...ALL], valid);
    expect(config.upstream).toMatchObject({ baseUrl: 'http://127.0.0.1:4010', concurrency: 8, maxAttempts: 6 });
    expect(config.temporal).toMatchObject({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'ddsync',
      tls: false,
    });
    expect(config.database?.poolSize).toBe(10);
    expect(config.refresh).toEqual({ interval: '6h', supplierConcurrency: 4, pageActivities: 'local' });
  });

  it('accepts refresh intervals Temporal understands and refuses the rest, naming the rule', () => {
    expect(loadConfig(['refresh'], { DDSYNC_REFRESH_INTERVAL: '45m' }).refresh?.interval).toBe('45m');
    for (const bad of ['6 hours', '10s', '0h', 'h', '1.5h']) {
      expect(() => loadConfig(['refresh'], { DDSYNC_REFRESH_INTERVAL: bad })).toThrow(
        /DDSYNC_REFRESH_INTERVAL is malformed: expected a duration of at least a minute/,
      );
    }
  });

  it('reads the waits of a transaction in ms, s, m, h or d and refuses other forms ms would read, naming the rule', () => {
    const timing = loadConfig(['submission'], { DDSYNC_TX_FIRST_POLL: '60ms', DDSYNC_TX_EU_WAIT: '45m' }).submission
      ?.timing;
    expect(timing).toEqual({
      firstPollMs: 60,
      maxPollMs: 3_600_000,
      euWaitMs: 2_700_000,
      deadlineMs: 7 * 86_400_000,
      createSettleMs: 120_000,
    });
    for (const bad of ['60', '1.5h', '6 hours', '2w', '-1m']) {
      expect(() => loadConfig(['submission'], { DDSYNC_TX_MAX_POLL: bad })).toThrow(
        'DDSYNC_TX_MAX_POLL is malformed: expected a duration: a whole number followed by ms, s, m, h or d',
      );
    }
  });

  it('reports every missing setting at once, by name, with what is expected', () => {
    const problems = problemsOf({});
    expect(problems).toEqual(
      expect.arrayContaining([
        'DDSYNC_UPSTREAM_URL is required: an http(s) URL, the service base address',
        'DDSYNC_CLIENT_ID is required: a non-empty string',
        'DDSYNC_CLIENT_SECRET is required: a non-empty string',
        'DATABASE_URL is required: a postgres:// URL',
      ]),
    );
    expect(problems).toHaveLength(4);
  });

  it('reports malformed values by name and rule', () => {
    const problems = problemsOf({
      ...valid,
      DDSYNC_UPSTREAM_URL: 'ftp://x',
      DDSYNC_HTTP_CONCURRENCY: '0',
      TEMPORAL_ADDRESS: 'no-port',
      TEMPORAL_TLS: 'maybe',
      DDSYNC_LOG_LEVEL: 'loud',
    });
    expect(problems).toEqual([
      'DDSYNC_UPSTREAM_URL is malformed: expected an http(s) URL, the service base address',
      'DDSYNC_HTTP_CONCURRENCY is malformed: expected an integer from 1 to 256',
      'TEMPORAL_ADDRESS is malformed: expected host:port',
      'TEMPORAL_TLS is malformed: expected true or false',
      'DDSYNC_LOG_LEVEL is malformed: expected one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('never echoes a secret, even a malformed one', () => {
    const error = (() => {
      try {
        loadConfig([...ALL], { ...valid, DATABASE_URL: 'mysql://app:db-password-123@db/x', TEMPORAL_API_KEY: ' ' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.message).toContain('DATABASE_URL is malformed');
    expect(error.message).not.toContain('db-password-123');
  });

  it('turns TLS on for Temporal Cloud API keys and requires certificate pairs', () => {
    expect(loadConfig([...ALL], { ...valid, TEMPORAL_API_KEY: 'key-abcdef' }).temporal?.tls).toBe(true);
    expect(problemsOf({ ...valid, TEMPORAL_TLS_CERT_PATH: '/c.pem' })).toEqual([
      'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together: set both or neither',
    ]);
  });

  it('only checks the sections a command needs', () => {
    expect(() => loadConfig(['logging', 'temporal'], {})).not.toThrow();
  });
});

// The full table lives in docs/configuration.md (the README links to it).
describe('the configuration reference (docs/configuration.md)', () => {
  it('lists every setting with its current default', async () => {
    const { readFile } = await import('node:fs/promises');
    const reference = await readFile(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    for (const [name, setting] of Object.entries(SETTINGS)) {
      const probe = setting.schema.safeParse(undefined);
      const fallback = !probe.success ? 'required' : probe.data === undefined ? '' : `\`${String(probe.data)}\``;
      expect(
        reference,
        `${name} in docs/configuration.md (regenerate with: node bin/ddsync.js config --markdown)`,
      ).toContain(`| \`${name}\` | ${fallback} | ${setting.rule} |`);
    }
  });
});
