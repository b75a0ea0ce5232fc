import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { StoredPdf } from '../../warehouse/pdfs/queue.ts';
import { TEMP_DIR, contentPath, describeHead, startsLikePdf } from './content-address.ts';

/**
 * The file work of the PDF archive: a download is streamed to a temporary file under `tmp/`
 * (never held in memory), checked to be a PDF, hashed (SHA-256) on the way, then moved to its
 * content address `<sha[0..2]>/<sha>.pdf` by an atomic rename. Content already stored is kept and
 * the download dropped, so identical PDFs take the space of one.
 */

/** The body is no PDF (no `%PDF-` header, empty, or shorter than its Content-Length). Retried later: it may be a proxy's error page. */
export class NotAPdfError extends Error {
  override name = 'NotAPdfError';
}

export interface StoreOptions {
  /** The response's Content-Length, when it sent one: a body of another size is refused. */
  expectedLength?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Bytes looked at before deciding whether a body is a PDF (and shown when it is not). */
const HEAD_BYTES = 40;

function checkHead(head: Buffer): void {
  if (!startsLikePdf(head))
    throw new NotAPdfError(
      `not a PDF: ${describeHead(head)}${head.length < HEAD_BYTES ? ` (${head.length} bytes)` : ''}`,
    );
}

/** Streams `body` into the archive under `archiveDir` (created if missing). */
export async function storePdf(
  archiveDir: string,
  body: AsyncIterable<Uint8Array>,
  options: StoreOptions = {},
): Promise<StoredPdf> {
  const tmpDir = join(archiveDir, TEMP_DIR);
  try {
    await mkdir(tmpDir, { recursive: true });
  } catch (error) {
    // Nothing will read the response: release its connection now rather than at the idle timeout.
    (body as { destroy?: () => void }).destroy?.();
    throw error;
  }
  const tmp = join(tmpDir, `${randomUUID()}.part`);
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  let headChecked = false;
  // `flush`: on disk (fsync) before it gets its final name, so a crash never leaves a short
  // file at a content address.
  const file = createWriteStream(tmp, { flags: 'wx', flush: true });

  try {
    await pipeline(
      body,
      async function* checkAndHash(source: AsyncIterable<Uint8Array>) {
        for await (const chunk of source) {
          const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
          if (!headChecked) {
            head = Buffer.concat([head, bytes]).subarray(0, HEAD_BYTES);
            // Decided on the first bytes: an HTML page or a JSON error is not downloaded to the end.
            if (head.length >= HEAD_BYTES) checkHead(head);
            headChecked = head.length >= HEAD_BYTES;
          }
          hash.update(bytes);
          size += bytes.length;
          yield bytes;
        }
      },
      file,
      ...(options.signal ? [{ signal: options.signal }] : []),
    );
    if (size === 0) throw new NotAPdfError('not a PDF: an empty body');
    if (!headChecked) checkHead(head);
    if (options.expectedLength !== undefined && size !== options.expectedLength) {
      throw new NotAPdfError(`incomplete PDF: ${size} bytes received, Content-Length said ${options.expectedLength}`);
    }

    const sha256 = hash.digest('hex');
    const storagePath = contentPath(sha256);
    const target = join(archiveDir, storagePath);
    // A new `ab/` folder must reach the disk too, or a power loss could take it and the file in it
    // while the warehouse says archived.
    const createdFolder = await mkdir(dirname(target), { recursive: true });
    if (createdFolder !== undefined) await syncDirectory(archiveDir);
    // The name is taken atomically (a hard link fails if it exists), so of two runs storing the
    // same content at once exactly one stores it and the other finds it: checking first and renaming
    // after would let both "store" it. Readers see no file or the whole file.
    const taken = await link(tmp, target).then(
      () => false,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return true;
        // A file system without hard links: rename, which is atomic too but replaces.
        if (['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV'].includes(error.code ?? ''))
          return rename(tmp, target).then(() => false);
        throw error;
      },
    );
    if (taken) {
      const existing = await stat(target);
      // Same name, same size: the same content (a file only gets its name once complete). A file of
      // another size there was damaged outside ddsync and is replaced by this good copy.
      if (existing.isFile() && existing.size === size) {
        await rm(tmp, { force: true });
        return { sha256, sizeBytes: size, storagePath, deduplicated: true };
      }
      await rename(tmp, target);
    }
    await rm(tmp, { force: true });
    await syncDirectory(dirname(target));
    return { sha256, sizeBytes: size, storagePath, deduplicated: false };
  } catch (error) {
    // pipeline() may reject before the destroyed file stream has finished opening and closing its
    // file; removing it before then would leave the file behind (seen under load).
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Makes a rename durable (the directory entry reaches the disk); a no-op where directories cannot be opened. */
async function syncDirectory(path: string): Promise<void> {
  try {
    const dir = await open(path, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Not supported on this platform or file system: the rename itself is still atomic.
  }
}

/**
 * Removes temporary files a worker left behind when it died mid-download (a running download
 * removes its own on failure). Only files older than `olderThanMs`, so downloads in progress on
 * other workers sharing the directory are left alone.
 */
export async function removeStaleTempFiles(archiveDir: string, olderThanMs: number, now = Date.now()): Promise<number> {
  const tmpDir = join(archiveDir, TEMP_DIR);
  let names: string[];
  try {
    names = await readdir(tmpDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith('.part')) continue;
    const path = join(tmpDir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info || now - info.mtimeMs < olderThanMs) continue;
    await rm(path, { force: true });
    removed++;
  }
  return removed;
}
