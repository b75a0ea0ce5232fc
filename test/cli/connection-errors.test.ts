import { describe, it, expect, beforeAll } from 'vitest';
import { freePort } from '../../infra/ports.ts';
import { runDdsync } from '../support/processes.ts';
import { embeddedStack } from '../support/stack.ts';

/** What a person reads: the output without the JSON log lines. */
async function said(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; lines: string[]; output: string }> {
  const run = runDdsync(args, { PATH: process.env.PATH, HOME: process.env.HOME, DDSYNC_LOG_FORMAT: 'json', ...env });
  const code = await run.exited;
  return {
    code,
    lines: run
      .output()
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('{')),
    output: run.output(),
  };
}

describe('a command that cannot connect says what it tried to reach and what to do next', () => {
  let closed: number;
  beforeAll(async () => {
    closed = await freePort();
  });

  it('refresh without Temporal: its address and namespace, `ddsync stack`, the settings; exit code 1', async () => {
    const { code, lines } = await said(['refresh'], {
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      TEMPORAL_NAMESPACE: 'ingest',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `ddsync refresh: cannot reach Temporal at 127.0.0.1:${closed} (namespace ingest): connection refused (nothing listens there). Is it running? \`ddsync stack\` starts one and prints its TEMPORAL_ADDRESS; otherwise check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE (Temporal Cloud: TEMPORAL_API_KEY or TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH).`,
    ]);
  });

  it('refresh --wait without a warehouse: host, port and database, never the user or password (checked before Temporal)', async () => {
    // Temporal is unreachable too: the warehouse is checked first, before anything is started that could not be followed.
    const { code, lines, output } = await said(['refresh', '--wait'], {
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      DATABASE_URL: `postgres://warehouse_owner:pw-3141-secret@127.0.0.1:${closed}/analytics`,
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `ddsync refresh: cannot reach the warehouse at 127.0.0.1:${closed}/analytics: connection refused (nothing listens there). Is it running? \`ddsync stack\` starts one and prints its DATABASE_URL; otherwise check DATABASE_URL.`,
    ]);
    expect(output).not.toContain('pw-3141-secret');
    expect(output).not.toContain('warehouse_owner');
  });

  it('migrate with a wrong password: the warehouse answered and refused, which is not "is it running?"', async () => {
    const url = new URL(embeddedStack().postgresUrlTemplate.replace('{database}', 'postgres'));
    url.password = 'not-the-password-2718';
    const { code, lines, output } = await said(['migrate'], { DATABASE_URL: url.href });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^ddsync migrate: the warehouse at 127\\.0\\.0\\.1:${url.port}/postgres refused the connection: password authentication failed for user "[^"]+"\\. Check DATABASE_URL\\.$`,
      ),
    );
    expect(output).not.toContain('not-the-password-2718');
  });

  it('invitations without the service: its URL, `ddsync simulator`, DDSYNC_UPSTREAM_URL', async () => {
    const { code, lines, output } = await said(['invitations', 'list'], {
      DDSYNC_UPSTREAM_URL: `http://127.0.0.1:${closed}/api`,
      DDSYNC_CLIENT_ID: 'client-1',
      DDSYNC_CLIENT_SECRET: 'client-secret-1618',
      DDSYNC_HTTP_MAX_ATTEMPTS: '1',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `ddsync invitations: cannot reach the service at http://127.0.0.1:${closed}/api: connection refused (nothing listens there), after 1 attempt. Is it running? \`ddsync simulator\` starts a local stand-in and prints its URL; otherwise check DDSYNC_UPSTREAM_URL.`,
    ]);
    expect(output).not.toContain('client-secret-1618');
  });
});
