// Scaled timers that close() can cancel all at once, so a stopped simulator leaves nothing behind.

export class Timers {
  private handles = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(readonly timeScale: number) {}

  /** Runs `fn` after `ms` of simulated time (ms × timeScale of real time). */
  after(ms: number, fn: () => void): void {
    if (this.closed) return;
    const handle = setTimeout(
      () => {
        this.handles.delete(handle);
        fn();
      },
      Math.max(0, Math.round(ms * this.timeScale)),
    );
    this.handles.add(handle);
  }

  /** Resolves after `ms` of simulated time, or at once when closed. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || ms <= 0) return resolve();
      this.after(ms, resolve);
    });
  }

  get pending(): number {
    return this.handles.size;
  }

  close(): void {
    this.closed = true;
    for (const handle of this.handles) clearTimeout(handle);
    this.handles.clear();
  }
}
