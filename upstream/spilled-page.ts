import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ArrayScanner, type ArrayElements } from './array-elements.ts';

/**
 * A page body too large to hold in memory, kept in a temporary file as it arrives, and scanned into
 * its plots (array-elements.ts) from the file, a megabyte at a time, when it is split: a page found
 * unchanged by its hash is never scanned. Its plots are then read from the file one by one, by the
 * offsets the scan found, so a page of any size costs the worker the memory of one plot, not of the page.
 *
 * The file is made in the system's temporary directory (TMPDIR), readable by this user only, and
 * unlinked at once: it has no name while the page is read, and whatever ends the process (a crash, a
 * SIGKILL, an OOM kill), the kernel frees its blocks with the process. A full disk fails the page's
 * read with a sentence naming the directory; the request is then retried as any failed body is.
 */
/** How much of the file the scan reads at once. */
const SCAN_BYTES = 1024 * 1024;

export class SpilledPage {
  private readonly fd: number;
  private length = 0;
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
  }

  /**
   * The page's elements (array-elements.ts), scanned from the file on first use; throws ArraySplitError
   * (or NotUtf8Error for an id) when the body is not one array.
   */
  scanned(): ArrayElements {
    if (this.elements) return this.elements;
    const scanner = new ArrayScanner();
    const buffer = Buffer.allocUnsafeSlow(Math.min(SCAN_BYTES, Math.max(this.length, 1)));
    for (let at = 0; at < this.length; ) {
      const n = this.readInto(buffer, at, Math.min(buffer.byteLength, this.length - at));
      scanner.push(buffer.subarray(0, n));
      at += n;
    }
    this.elements = scanner.end();
    return this.elements;
  }

  /** Bytes [start, end) of the body, read from the file into a buffer of their own. */
  read(start: number, end: number): Uint8Array {
    const buffer = Buffer.allocUnsafeSlow(end - start);
    this.readInto(buffer, start, buffer.byteLength);
    return buffer;
  }

  /** Fills `buffer` with `length` bytes of the body from `start`; returns `length`. */
  private readInto(buffer: Buffer, start: number, length: number): number {
    if (this.closed) throw new Error('page body used after release');
    let read = 0;
    while (read < length) {
      const n = readSync(this.fd, buffer, read, length - read, start + read);
      if (n === 0) throw new Error(`a kept page body ended at byte ${start + read}, before byte ${start + length}`);
      read += n;
    }
    return length;
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
