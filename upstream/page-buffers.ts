/**
 * Buffers for page bodies, used again page after page. A page of 500 plots arrives in socket chunks of
 * up to 64 KB, about twenty of them. Kept as they came (the old way), each chunk outlived the scavenges
 * of the other lanes' parsing and was promoted, and a page that changed was joined into one more
 * megabyte before it was decoded. Copied into one buffer of this pool as they arrive, the chunks die
 * young, a page is hashed and decoded from one contiguous view, and its memory serves the next page.
 * Measured (docs/benchmarks.md): the worker's CPU about a tenth lower in a full and a no-change
 * refresh; its peak RSS unchanged.
 *
 * A buffer is lent for one page and given back by `release` once the page has been hashed and parsed
 * or found unchanged. One never given back is only garbage: the pool keeps no list of lent buffers.
 * A body used after its release throws, so a page can never be read from a buffer lent again.
 */

/** One page body: collected chunk by chunk into one lent buffer, then read, then given back. */
export interface PageBody {
  /** Appends a chunk (copied: the chunk may be let go at once). */
  append(chunk: Uint8Array): void;
  /** The bytes so far: a view of the lent buffer, valid until `release`. */
  bytes(): Uint8Array;
  /** Gives the buffer back; the body is unusable after (idempotent). */
  release(): void;
}

/** A new buffer's size when the length is not known beforehand (a compressed or chunked response). */
const UNKNOWN_LENGTH_BYTES = 256 * 1024;
/**
 * The most a buffer is sized by an announced length before any byte came: a Content-Length is the
 * service's word, and a hostile or broken one must not make the worker take gigabytes at once; a
 * larger body grows the buffer as its bytes really arrive.
 */
export const MAX_PRESIZED_BYTES = 8 * 1024 * 1024;

/** The largest buffer kept for the next pages (an ordinary page weighs about 1.4 MB). */
export const MAX_KEPT_BYTES = MAX_PRESIZED_BYTES;

/**
 * The size of a buffer outgrown by a body that needs `needed` bytes. Past the presized bound, with a
 * length announced, straight to that length (a page of 60 MB grown by half from 8 MB took five buffers,
 * 166 MB allocated for one page, the outgrown ones alive until a garbage collection let them go),
 * but never past sixteen times what really arrived: a lying Content-Length costs at most that. More than
 * announced, or no length known: grown by half.
 */
function grownSize(current: number, needed: number, expected: number | undefined): number {
  if (expected !== undefined && expected >= needed) return Math.min(expected, needed * 16);
  return Math.max(Math.ceil(current * 1.5), needed);
}

/**
 * How long the one large buffer is kept unused: pages of plots drawn in detail come one after the other
 * within a refresh, and a refresh of ordinary pages afterwards should not hold 60 MB for nothing.
 */
const LARGE_IDLE_MS = 30_000;

export class PageBufferPool {
  private readonly free: Buffer[] = [];
  /**
   * One buffer larger than MAX_KEPT_BYTES, kept for the next large page. A buffer let go is freed only
   * when a garbage collection finds it, which a worker reading pages of 60 MB one after the other did
   * not run before the next page's buffer was taken: two pages' buffers were alive at once (measured:
   * 80 MB more RSS). Reused, a large page costs one buffer, whatever the number of pages.
   */
  private large: Buffer | undefined;
  private largeTimer: NodeJS.Timeout | undefined;

  /** `maxFree`: buffers kept for the next pages; more given back are let go. */
  constructor(private readonly maxFree = 4) {}

  /** Buffers kept for reuse now (for tests and figures), the large one included. */
  get freeCount(): number {
    return this.free.length + (this.large ? 1 : 0);
  }

  /** A body for one page; `expectedBytes` (the Content-Length, when known) sizes it. */
  body(expectedBytes?: number): PageBody {
    let buffer: Buffer | undefined =
      expectedBytes !== undefined && expectedBytes > MAX_PRESIZED_BYTES
        ? this.takeLarge(Math.min(expectedBytes, MAX_PRESIZED_BYTES))
        : undefined;
    buffer ??= this.take(Math.min(expectedBytes ?? UNKNOWN_LENGTH_BYTES, MAX_PRESIZED_BYTES));
    let length = 0;
    const lent = (): Buffer => {
      if (!buffer) throw new Error('page body used after release');
      return buffer;
    };
    return {
      append: (chunk) => {
        let target = lent();
        const needed = length + chunk.byteLength;
        if (needed > target.byteLength) {
          // With room for a little more: the next page, about as large, then fits the buffer kept.
          const size = Math.ceil(
            grownSize(target.byteLength, needed, expectedBytes) * (needed > MAX_KEPT_BYTES ? 1.125 : 1),
          );
          const grown = this.takeLarge(needed) ?? Buffer.allocUnsafeSlow(size);
          target.copy(grown, 0, 0, length);
          // An outgrown small buffer serves later pages; an outgrown large one is let go (kept, it would
          // be a second large buffer alive beside this one).
          if (target.byteLength <= MAX_KEPT_BYTES) this.giveBack(target);
          buffer = target = grown;
        }
        target.set(chunk, length);
        length += chunk.byteLength;
      },
      bytes: () => lent().subarray(0, length),
      release: () => {
        if (!buffer) return;
        this.giveBack(buffer);
        buffer = undefined;
      },
    };
  }

  private giveBack(buffer: Buffer): void {
    if (buffer.byteLength <= MAX_KEPT_BYTES) {
      if (this.free.length < this.maxFree) this.free.push(buffer);
      return;
    }
    // Of two large buffers, the larger is kept.
    if (this.large && this.large.byteLength >= buffer.byteLength) return;
    this.large = buffer;
    clearTimeout(this.largeTimer);
    this.largeTimer = setTimeout(() => {
      this.large = undefined;
    }, LARGE_IDLE_MS);
    this.largeTimer.unref();
  }

  /**
   * The large buffer when it holds `atLeast` bytes (it is then lent, no longer kept). When it does
   * not, it is let go: the larger buffer about to be taken replaces it, and both must not be alive.
   */
  private takeLarge(atLeast: number): Buffer | undefined {
    const large = this.large;
    this.large = undefined;
    clearTimeout(this.largeTimer);
    return large && large.byteLength >= atLeast ? large : undefined;
  }

  /** The smallest free buffer that holds `atLeast` bytes, or a new one of that size. */
  private take(atLeast: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const size = this.free[i]!.byteLength;
      if (size >= atLeast && (best < 0 || size < this.free[best]!.byteLength)) best = i;
    }
    if (best >= 0) return this.free.splice(best, 1)[0]!;
    return Buffer.allocUnsafeSlow(atLeast);
  }
}
