import { describe, it, expect } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../../platform/logger.ts';
import { registerSecret } from '../../../platform/secrets.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

const CLIENT_SECRET = 'cs-7f3a9d2e-very-secret';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZHN5bmMtZGVtbyJ9.c2lnbmF0dXJlLWJ5dGVz';
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('logging', () => {
  for (const format of ['json', 'pretty'] as const) {
    it(`keeps secrets out of ${format} lines by field name, by value and by shape`, () => {
      registerSecret(CLIENT_SECRET);
      const { lines, destination } = capture();
      const log = createLogger({ format, destination, level: 'debug' });
      log.info({ clientSecret: CLIENT_SECRET, access_token: TOKEN }, 'token exchange');
      log.info({ request: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'request');
      log.warn({ webhook: { secret: WEBHOOK_SECRET } }, 'webhook secret fetched');
      log.error({ err: new Error(`upstream said: bad client_secret=${CLIENT_SECRET} for Bearer ${TOKEN}`) }, 'failed');
      log.info(`verifying with ${WEBHOOK_SECRET}`);
      log.info({ url: 'postgres://app:db-pass-42@db:5432/w' }, 'connecting');
      const text = lines.join('');
      expect(lines.length).toBeGreaterThanOrEqual(6);
      for (const secret of [CLIENT_SECRET, TOKEN, WEBHOOK_SECRET, 'db-pass-42']) expect(text).not.toContain(secret);
      expect(text).toContain('[redacted]');
      expect(text).toContain('token exchange');
    });
  }

  it('writes one JSON object per line by default when not on a terminal', () => {
    const { lines, destination } = capture();
    createLogger({ format: 'json', destination }).info({ pages: 3 }, 'loaded');
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 30, msg: 'loaded', pages: 3, name: 'ddsync' });
  });
});
