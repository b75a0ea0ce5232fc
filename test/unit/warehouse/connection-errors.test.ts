import { describe, it, expect } from 'vitest';
import { classifyWarehouseError } from '../../../warehouse/connection-errors.ts';

const withCode = (code: string, message = `error ${code}`) => Object.assign(new Error(message), { code });

describe('classifyWarehouseError', () => {
  it('calls a restart, failover, cut or exhausted connection, or a read-only warehouse, unavailable', () => {
    for (const error of [
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P02'),
      withCode('57P03', 'the database system is starting up'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('25006', 'cannot execute INSERT in a read-only transaction'),
      withCode('08006'),
      withCode('08P01'),
      withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      withCode('EPIPE', 'write EPIPE'),
      withCode('ECONNRESET'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
    ])
      expect(classifyWarehouseError(error), error.message).toMatchObject({ kind: 'unavailable' });
  });

  it('finds the cause through wrappers and aggregate errors (a connect to several addresses)', () => {
    const wrapped = new Error('page 3 failed', { cause: new Error('outer', { cause: withCode('57P01') }) });
    expect(classifyWarehouseError(wrapped)).toMatchObject({ kind: 'unavailable' });
    const aggregate = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '');
    expect(classifyWarehouseError(aggregate)).toMatchObject({ kind: 'unavailable' });
  });

  it('calls lock and statement timeouts, deadlocks and serialization failures contended', () => {
    for (const code of ['55P03', '57014', '40001', '40P01'])
      expect(classifyWarehouseError(withCode(code))).toMatchObject({ kind: 'contended' });
  });

  it('calls refused credentials, a missing database and a broken schema fatal, with the next step', () => {
    expect(classifyWarehouseError(withCode('28P01', 'password authentication failed for user "ddsync"'))).toEqual({
      kind: 'fatal',
      reason: expect.stringMatching(/refuses the password of DATABASE_URL: correct DATABASE_URL/),
    });
    expect(classifyWarehouseError(withCode('3D000'))).toMatchObject({ kind: 'fatal' });
    expect(classifyWarehouseError(withCode('42P01', 'relation "plots" does not exist'))?.reason).toMatch(
      /another tool changed the warehouse's schema.*relation "plots" does not exist/,
    );
  });

  it('leaves everything else to the caller: bad values, bugs, the service', () => {
    for (const error of [
      withCode('22001', 'value too long'),
      withCode('23505', 'duplicate key'),
      new TypeError('x is undefined'),
      new Error('GET /plots: 503'),
      'a string',
      null,
      undefined,
    ])
      expect(classifyWarehouseError(error)).toBeUndefined();
  });

  it('stops on a cause chain that loops', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(classifyWarehouseError(a)).toBeUndefined();
  });
});
