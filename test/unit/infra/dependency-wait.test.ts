import { describe, it, expect } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../../platform/logger.ts';
import { ConnectionFailedError, warehouseEndpoint } from '../../../infra/connection-failure.ts';
import { untilAvailable, worthWaitingFor } from '../../../infra/dependency-wait.ts';

const endpoint = warehouseEndpoint('postgres://u:secret@db.example:5432/warehouse');

function memoryLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger({ format: 'json', destination }) };
}

function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('waiting at start for a dependency', () => {
  it('waits for what is away or passing, never for what is refused', () => {
    expect(worthWaitingFor(new ConnectionFailedError(endpoint, 'connection refused', false))).toBe(true);
    const starting = serverError('57P03', 'the database system is starting up');
    expect(worthWaitingFor(new ConnectionFailedError(endpoint, starting.message, true, starting))).toBe(true);
    const full = serverError('53300', 'sorry, too many clients already');
    expect(worthWaitingFor(new ConnectionFailedError(endpoint, full.message, true, full))).toBe(true);
    const password = serverError('28P01', 'password authentication failed for user "u"');
    expect(worthWaitingFor(new ConnectionFailedError(endpoint, password.message, true, password))).toBe(false);
    const noDatabase = serverError('3D000', 'database "warehouse" does not exist');
    expect(worthWaitingFor(new ConnectionFailedError(endpoint, noDatabase.message, true, noDatabase))).toBe(false);
    expect(worthWaitingFor(new Error('a bug'))).toBe(false);
  });

  it('tries again until the dependency answers, saying so once when the wait begins and once when it ends', async () => {
    const { lines, log } = memoryLog();
    let attempts = 0;
    const connected = await untilAvailable(
      async () => {
        attempts++;
        if (attempts < 4) throw new ConnectionFailedError(endpoint, 'connection refused', false);
        return 'connected';
      },
      { name: 'the warehouse', log, maxDelayMs: 20 },
    );
    expect(connected).toBe('connected');
    expect(attempts).toBe(4);
    expect(lines.map((l) => l.level)).toEqual([40, 30]);
    expect(lines[0]!.msg).toMatch(
      /^the warehouse is unavailable: cannot reach the warehouse at db.example:5432\/warehouse/,
    );
    expect(lines[0]!.msg).toMatch(/waiting for it before starting$/);
    expect(JSON.stringify(lines)).not.toContain('secret');
  });

  it('stops at once on what waiting cannot mend, and when told to stop', async () => {
    const { log } = memoryLog();
    const refused = serverError('28P01', 'password authentication failed');
    await expect(
      untilAvailable(
        async () => {
          throw new ConnectionFailedError(endpoint, refused.message, true, refused);
        },
        { name: 'the warehouse', log },
      ),
    ).rejects.toThrow(/refused the connection/);
    const controller = new AbortController();
    const away = new ConnectionFailedError(endpoint, 'connection refused', false);
    const waiting = untilAvailable(
      async () => {
        controller.abort();
        throw away;
      },
      { name: 'the warehouse', log, signal: controller.signal },
    );
    await expect(waiting).rejects.toBe(away);
  });
});
