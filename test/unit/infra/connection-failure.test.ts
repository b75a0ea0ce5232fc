import { describe, it, expect } from 'vitest';
import {
  ConnectionFailedError,
  networkReason,
  temporalEndpoint,
  upstreamEndpoint,
  warehouseEndpoint,
} from '../../../infra/connection-failure.ts';

describe('connection failures name the place, never the credentials', () => {
  it('a warehouse by host, port and database only, in the forms libpq accepts', () => {
    expect(warehouseEndpoint('postgres://owner:s3cret@db.internal:6432/analytics?sslmode=require').where).toBe(
      'db.internal:6432/analytics',
    );
    expect(warehouseEndpoint('postgresql://owner:s3cret@db.internal/warehouse').where).toBe(
      'db.internal:5432/warehouse',
    );
    expect(warehouseEndpoint('postgres://owner@localhost/warehouse?host=/var/run/postgresql').where).toBe(
      '/var/run/postgresql:5432/warehouse',
    );
    expect(warehouseEndpoint('postgres://owner:s3cret@db.internal:5433').where).toBe(
      "db.internal:5433/(the user's default database)",
    );
  });

  it('the service by its URL without user info, query or trailing slash', () => {
    expect(upstreamEndpoint('https://svc:s3cret@api.example.com/v1/?x=1').where).toBe('https://api.example.com/v1');
  });

  it('says what to do: start one, or check the settings; a refusal only asks to check them', () => {
    const unreachable = new ConnectionFailedError(
      temporalEndpoint('temporal.internal:7233', 'prod'),
      'no such host',
      false,
    );
    expect(unreachable.message).toMatch(
      /^cannot reach Temporal at temporal\.internal:7233 \(namespace prod\): no such host\. Is it running\? `ddsync stack` starts one .*; otherwise check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE/,
    );
    const refused = new ConnectionFailedError(
      warehouseEndpoint('postgres://o:p@h:1/d'),
      'database "d" does not exist',
      true,
    );
    expect(refused.message).toBe(
      'the warehouse at h:1/d refused the connection: database "d" does not exist. Check DATABASE_URL.',
    );
  });

  it("finds the operating system's error code under fetch's wrappers", () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
    });
    expect(networkReason(refused)).toBe('connection refused (nothing listens there)');
    expect(networkReason(new Error('socket hang up'))).toBe('socket hang up');
  });
});
