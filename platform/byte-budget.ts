/**
 * Bytes of work admitted at once: a task asks for its size and waits until the bytes in use leave
 * room for it. A task larger than the whole budget is admitted when nothing else holds any, so it runs
 * alone rather than never. First come, first admitted: a large task waiting is not passed by small
 * ones, which would starve it.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; admit: () => void }> = [];

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new RangeError(`a byte budget needs a positive capacity, got ${capacity}`);
  }

  /** Bytes admitted and not yet given back. */
  get inUse(): number {
    return this.used;
  }

  /** Tasks waiting for room. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for room for `bytes`, then returns the function that gives them back (once; later calls do
   * nothing). An aborted `signal` ends the wait with its reason and takes nothing.
   */
  async acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const size = Math.max(0, bytes);
    if (this.waiting.length === 0 && this.fits(size)) {
      this.used += size;
      return this.giver(size);
    }
    await new Promise<void>((resolve, reject) => {
      const entry = { bytes: size, admit: () => (signal?.removeEventListener('abort', onAbort), resolve()) };
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        // The one who left may have held back smaller tasks behind it.
        this.admitWaiting();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
    return this.giver(size);
  }

  /**
   * Counts `bytes` at once, without waiting, and returns the function that gives them back: for bytes
   * already in memory beyond what was asked for (a page larger than its estimate). The bytes in use may
   * then pass the capacity, and every task waits until they are given back.
   */
  take(bytes: number): () => void {
    const size = Math.max(0, bytes);
    this.used += size;
    return this.giver(size);
  }

  private fits(size: number): boolean {
    return this.used === 0 || this.used + size <= this.capacity;
  }

  private giver(size: number): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= size;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.admit();
    }
  }
}
