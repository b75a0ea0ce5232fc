import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { NotAPdfError, removeStaleTempFiles, storePdf } from '../../../../activities/pdfs/archive.ts';
import { renderPdf } from '../../../../simulator/pdf.ts';

/** A body delivered in small chunks, as a network stream would. */
function chunked(bytes: Buffer, size = 3): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return Readable.from(parts);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1))
    .sort();
}

describe('storing a PDF by content', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ddsync-pdf-unit-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('streams to a temporary file, then renames it to <sha[0..2]>/<sha>.pdf', async () => {
    const pdf = renderPdf('Survey response', ['line one', 'line two']);
    const sha = createHash('sha256').update(pdf).digest('hex');
    const stored = await storePdf(dir, chunked(pdf), { expectedLength: pdf.length });
    expect(stored).toEqual({
      sha256: sha,
      sizeBytes: pdf.length,
      storagePath: `${sha.slice(0, 2)}/${sha}.pdf`,
      deduplicated: false,
    });
    expect(await readFile(join(dir, stored.storagePath))).toEqual(pdf);
    expect(await filesUnder(dir)).toEqual([stored.storagePath]);
  });

  it('stores identical content once and drops the second download', async () => {
    const pdf = renderPdf('Same', ['same text']);
    const first = await storePdf(dir, chunked(pdf));
    const second = await storePdf(dir, chunked(pdf, 7));
    expect(first.deduplicated).toBe(false);
    expect(second).toEqual({ ...first, deduplicated: true });
    expect(await filesUnder(dir)).toEqual([first.storagePath]);
    const other = await storePdf(dir, chunked(renderPdf('Other', ['other text'])));
    expect(other.deduplicated).toBe(false);
    expect(await filesUnder(dir)).toEqual([first.storagePath, other.storagePath].sort());
  });

  it('stores identical content once when several downloads of it finish at the same moment', async () => {
    const pdf = renderPdf('Same', ['same text, at once']);
    const stored = await Promise.all(Array.from({ length: 6 }, (_, i) => storePdf(dir, chunked(pdf, 5 + i))));
    // Exactly one stored it, whatever the interleaving; the others found it.
    expect(stored.filter((s) => !s.deduplicated)).toHaveLength(1);
    expect(new Set(stored.map((s) => s.storagePath)).size).toBe(1);
    expect(await filesUnder(dir)).toEqual([stored[0]!.storagePath]);
  });

  it('replaces a damaged file at a content address (wrong size) with the good copy', async () => {
    const pdf = renderPdf('Damaged', ['x']);
    const sha = createHash('sha256').update(pdf).digest('hex');
    await mkdir(join(dir, sha.slice(0, 2)), { recursive: true });
    await writeFile(join(dir, sha.slice(0, 2), `${sha}.pdf`), pdf.subarray(0, 10));
    const stored = await storePdf(dir, chunked(pdf));
    expect(stored.deduplicated).toBe(false);
    expect(await readFile(join(dir, stored.storagePath))).toEqual(pdf);
  });

  it('refuses a body that is not a PDF, an empty body and a short one, leaving nothing behind', async () => {
    await expect(storePdf(dir, chunked(Buffer.from('<html><body>502 Bad Gateway</body></html>'), 2))).rejects.toThrow(
      new NotAPdfError('not a PDF: a body starting "<html><body>502 Bad Gateway</body></html"'),
    );
    await expect(storePdf(dir, Readable.from([]))).rejects.toThrow('not a PDF: an empty body');
    await expect(storePdf(dir, Readable.from([Buffer.from('%PD')]))).rejects.toThrow(
      'not a PDF: a body starting "%PD" (3 bytes)',
    );
    await expect(storePdf(dir, Readable.from([Buffer.from('{"statusCode":502}')]))).rejects.toThrow(
      'not a PDF: a body starting "{"statusCode":502}" (18 bytes)',
    );
    const pdf = renderPdf('Cut', ['short']);
    await expect(storePdf(dir, chunked(pdf), { expectedLength: pdf.length + 100 })).rejects.toThrow(
      `incomplete PDF: ${pdf.length} bytes received, Content-Length said ${pdf.length + 100}`,
    );
    expect(await filesUnder(dir)).toEqual([]);
  });

  it('leaves no temporary file when the body is refused before its file has even opened', async () => {
    // One chunk, refused at once: the write stream is destroyed while its open() is in flight.
    const html = Buffer.from('<html><head><title>502 Bad Gateway</title></head></html>');
    for (let i = 0; i < 20; i++) await expect(storePdf(dir, Readable.from([html]))).rejects.toThrow(NotAPdfError);
    expect(await filesUnder(dir)).toEqual([]);
  });

  it('removes the temporary file when the download fails midway', async () => {
    const pdf = renderPdf('Broken', ['connection lost']);
    async function* breaking() {
      yield pdf.subarray(0, 20);
      throw new Error('socket hang up');
    }
    await expect(storePdf(dir, breaking())).rejects.toThrow('socket hang up');
    expect(await filesUnder(dir)).toEqual([]);
  });

  it('sweeps only stale temporary files', async () => {
    await mkdir(join(dir, 'tmp'));
    await writeFile(join(dir, 'tmp', 'old.part'), 'x');
    await writeFile(join(dir, 'tmp', 'fresh.part'), 'x');
    await writeFile(join(dir, 'tmp', 'keep.txt'), 'x');
    const hourAgo = new Date(Date.now() - 2 * 3_600_000);
    await utimes(join(dir, 'tmp', 'old.part'), hourAgo, hourAgo);
    expect(await removeStaleTempFiles(dir, 3_600_000)).toBe(1);
    expect((await readdir(join(dir, 'tmp'))).sort()).toEqual(['fresh.part', 'keep.txt']);
    expect(await removeStaleTempFiles(join(dir, 'missing'), 1)).toBe(0);
    await expect(stat(join(dir, 'tmp', 'old.part'))).rejects.toThrow(/ENOENT/);
  });
});
