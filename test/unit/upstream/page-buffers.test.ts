import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../upstream/client.ts';
import { MAX_KEPT_BYTES, MAX_PRESIZED_BYTES, PageBufferPool } from '../../../upstream/page-buffers.ts';
import { fakeJwt, json, startServer, tokenRoute, type LocalServer } from './local-server.ts';
import { samplePage } from './samples.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('page buffers', () => {
  it('collects chunks into one body, and lends the same memory to the next page once given back', () => {
    const pool = new PageBufferPool();
    const first = pool.body(10);
    first.append(bytes('abc'));
    first.append(bytes('defg'));
    expect(Buffer.from(first.bytes()).toString()).toBe('abcdefg');
    const memory = first.bytes().buffer;
    first.release();
    first.release();
    expect(pool.freeCount).toBe(1);
    expect(() => first.bytes()).toThrow('page body used after release');
    expect(() => first.append(bytes('x'))).toThrow('page body used after release');

    const second = pool.body(10);
    second.append(bytes('xyz'));
    expect(second.bytes().buffer).toBe(memory);
    expect(Buffer.from(second.bytes()).toString()).toBe('xyz');
  });

  it('grows past the announced length, or without one, keeping every byte', () => {
    const pool = new PageBufferPool();
    const body = pool.body(4);
    const chunks = Array.from({ length: 50 }, (_, i) => bytes(`chunk ${i};`));
    for (const c of chunks) body.append(c);
    expect(Buffer.from(body.bytes()).toString()).toBe(chunks.map((c) => Buffer.from(c).toString()).join(''));
    const unknown = pool.body();
    const big = new Uint8Array(600 * 1024).fill(7);
    unknown.append(big);
    unknown.append(bytes('!'));
    expect(unknown.bytes().length).toBe(big.length + 1);
    expect(unknown.bytes()[big.length - 1]).toBe(7);
    expect(unknown.bytes()[big.length]).toBe('!'.charCodeAt(0));
  });

  it('never sizes a buffer by an announced length past a bound: a lying Content-Length takes no gigabytes', () => {
    const body = new PageBufferPool().body(2 ** 40);
    body.append(bytes('[]'));
    expect(body.bytes().buffer.byteLength).toBe(MAX_PRESIZED_BYTES);
    expect(Buffer.from(body.bytes()).toString()).toBe('[]');
  });

  it('keeps at most maxFree buffers, and lends the smallest that holds a page', () => {
    const pool = new PageBufferPool(2);
    const bodies = [100, 300, 200].map((n) => pool.body(n));
    for (const b of bodies) b.release();
    expect(pool.freeCount).toBe(2);
    const small = pool.body(150);
    small.append(new Uint8Array(150));
    // The 200-byte buffer was let go (given back to a full pool); of 100 and 300, only 300 holds 150.
    expect(small.bytes().buffer.byteLength).toBe(300);
    expect(pool.freeCount).toBe(1);
  });

  it('grows a body announced larger than the presized bound straight to its length (and an eighth), at most sixteen times what came', () => {
    const announced = 20 * 1024 * 1024;
    const body = new PageBufferPool().body(announced);
    body.append(new Uint8Array(MAX_PRESIZED_BYTES));
    body.append(new Uint8Array(1024));
    expect(body.bytes().buffer.byteLength).toBe(announced * 1.125);
    const lying = new PageBufferPool().body(2 ** 40);
    lying.append(new Uint8Array(MAX_PRESIZED_BYTES + 1));
    expect(lying.bytes().buffer.byteLength).toBe(Math.ceil(16 * (MAX_PRESIZED_BYTES + 1) * 1.125));
  });

  it('keeps one large buffer, the largest, and lends it to the next large page instead of a new one', () => {
    const pool = new PageBufferPool();
    const first = pool.body(20 * 1024 * 1024);
    first.append(new Uint8Array(20 * 1024 * 1024));
    const memory = first.bytes().buffer;
    first.release();
    const smaller = pool.body(1024);
    smaller.append(new Uint8Array(MAX_KEPT_BYTES + 1));
    smaller.release();
    // The 8 MB buffer the first page grew from, and the large one (lent to the second page and back).
    expect(pool.freeCount).toBe(2);
    const next = pool.body(12 * 1024 * 1024);
    expect(next.bytes().buffer).toBe(memory);
    next.append(new Uint8Array(12 * 1024 * 1024));
    expect(next.bytes().buffer).toBe(memory);
    // A page larger than it grows into a new buffer; the outgrown large one is kept.
    const larger = pool.body(1024);
    larger.append(new Uint8Array(MAX_KEPT_BYTES));
    larger.append(new Uint8Array(24 * 1024 * 1024));
    expect(larger.bytes().buffer.byteLength).toBeGreaterThan(24 * 1024 * 1024);
  });
});

describe('a page read into a lent buffer', () => {
  let server: LocalServer | undefined;
  afterEach(async () => server?.close());

  it("reads the service's bytes, and a page decoded before its release keeps its text while the next page reuses the memory", async () => {
    const all = samplePage(30);
    server = await startServer((req, res) => {
      if (tokenRoute(req, res, () => fakeJwt(1))) return;
      const page = Number(req.query.get('page'));
      json(res, 200, all.slice((page - 1) * 10, page * 10));
    });
    const client = createUpstreamClient({ baseUrl: server.url, clientId: 'c', clientSecret: 'secret-xyz' });
    const first = await client.getSupplierPlotsPageText('sup-1', 1, { limit: 10 });
    const text = first.text;
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(all.slice(0, 10))));
    expect(Buffer.from(first.bytes).toString()).toBe(text);
    first.release();
    expect(() => first.bytes).toThrow('page body used after release');
    const second = await client.getSupplierPlotsPageText('sup-1', 2, { limit: 10 });
    expect(JSON.parse(second.text)).toEqual(JSON.parse(JSON.stringify(all.slice(10, 20))));
    second.release();
    // Decoded into a string of its own: the buffer lent again changed nothing of it.
    expect(first.text).toBe(text);
    // A parsed page (getSupplierPlotsPage) gives its buffer back itself.
    const parsed = await client.getSupplierPlotsPage('sup-1', 3, { limit: 10 });
    expect(parsed.plots.map((p) => p.id)).toEqual(all.slice(20, 30).map((p) => p.id));
  });
});
