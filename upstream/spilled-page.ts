import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ArrayScanner, type ArrayElements } from './array-elements.ts';

/**
 * A page body too large to hold in memory, kept in a temporary file as it arrives and scanned on the
 * way (array-elements.ts): its plots are then read from the file one by one, by the offsets the scan
 * found, so a page of any size costs the worker the memory of one plot, not of the page.
 *
 * The file is made in the system's temporary directory (TMPDIR), readable by this user only, and
 * unlinked at once: it has no name while the page is read, and whatever ends the process (a crash, a
 * SIGKILL, an OOM kill), the kernel frees its blocks with the process. A full disk fails the page's
 * read with a sentence naming the directory; the request is then retried as any failed body is.
 */
export class SpilledPage {
  private readonly fd: number;
  private length = 0;
  private readonly scanner = new ArrayScanner();
  /** The scan's first error: raised when the page is split, as an unsplittable page in memory is. */
  private scanError: unknown;
  private elements: ArrayElements | undefined;
  private closed = false;

  private constructor(
    fd: number,
    private readonly dir: string,
    /** Set when the file could not be unlinked at once: it is then removed at close. */
    private readonly path?: string,
  ) {
    this.fd = fd;
  }

  /** A new empty file in `dir` (the system's temporary directory by default), already unlinked. */
  static open(dir = tmpdir()): SpilledPage {
    const path = join(dir, `ddsync-page-${process.pid}-${randomUUID()}.json`);
    let fd: number;
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch (e) {
      throw new Error(`could not keep a large page body on disk in ${dir}: ${(e as Error).message}`, { cause: e });
    }
    try {
      unlinkSync(path);
    } catch {
      // Still named: removed at close instead (below); only a crash before then would leave it.
      return new SpilledPage(fd, dir, path);
    }
    return new SpilledPage(fd, dir);
  }

  /** Bytes kept so far. */
  get byteLength(): number {
    return this.length;
  }

  /** Appends the next bytes of the body (written at once: `chunk` may be let go). */
  append(chunk: Uint8Array): void {
    if (this.closed) throw new Error('page body used after release');
    let written = 0;
    try {
      while (written < chunk.byteLength)
        written += writeSync(this.fd, chunk, written, chunk.byteLength - written, this.length + written);
    } catch (e) {
      throw new Error(`could not keep a large page body on disk in ${this.dir}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    this.length += chunk.byteLength;
    if (this.scanError === undefined)
      try {
        this.scanner.push(chunk);
      } catch (e) {
        this.scanError = e;
      }
  }

  /** The page's elements (array-elements.ts); throws the scan's error when the body is not one array. */
  scanned(): ArrayElements {
    if (this.scanError !== undefined) throw this.scanError;
    this.elements ??= this.scanner.end();
    return this.elements;
  }

  /** Bytes [start, end) of the body, read from the file into a buffer of their own. */
  read(start: number, end: number): Uint8Array {
    if (this.closed) throw new Error('page body used after release');
    const buffer = Buffer.allocUnsafeSlow(end - start);
    let read = 0;
    while (read < buffer.byteLength) {
      const n = readSync(this.fd, buffer, read, buffer.byteLength - read, start + read);
      if (n === 0) throw new Error(`a kept page body ended at byte ${start + read}, before byte ${end}`);
      read += n;
    }
    return buffer;
  }

  /** Closes the file, which frees its blocks (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (this.path)
      try {
        unlinkSync(this.path);
      } catch {
        // Gone already.
      }
  }
}
