import type { Logger } from './logger.ts';

/**
 * One dependency's outages as an operator reads them in the log: one line when the dependency first
 * fails ("the warehouse is unavailable: …; work waits and is retried"), one when it is back ("… is
 * available again after 12.3 s; 41 failed attempts were retried"), and a reminder every
 * `remindEveryMs` while it stays away. Every failed statement, request or activity in between only
 * counts: a 10-second restart under load is two lines, not hundreds.
 */
export interface OutageOptions {
  /** "the warehouse", "Temporal", "the service". */
  name: string;
  log: Logger;
  /** Default 5 minutes. */
  remindEveryMs?: number;
  now?: () => number;
}

export class Outage {
  private since: number | undefined;
  private lastSaid = 0;
  private failures = 0;
  private reason = '';
  private passingSaid: number | undefined;
  private passingFailures = 0;
  private readonly remindEveryMs: number;
  private readonly now: () => number;

  constructor(private readonly options: OutageOptions) {
    this.remindEveryMs = options.remindEveryMs ?? 300_000;
    this.now = options.now ?? Date.now;
  }

  get down(): boolean {
    return this.since !== undefined;
  }

  /** A failure that shows the dependency is away; logged when it opens an outage or a reminder is due. */
  failed(reason: string, what = 'work waits and is retried'): void {
    const now = this.now();
    this.failures++;
    if (this.since === undefined) {
      this.since = now;
      this.lastSaid = now;
      this.reason = reason;
      this.options.log.warn(
        { dependency: this.options.name, reason },
        `${this.options.name} is unavailable: ${reason}; ${what}`,
      );
      return;
    }
    this.reason = reason;
    if (now - this.lastSaid >= this.remindEveryMs) {
      this.lastSaid = now;
      const seconds = Math.round((now - this.since) / 1000);
      this.options.log.warn(
        { dependency: this.options.name, reason, downForSeconds: seconds, failures: this.failures },
        `${this.options.name} is still unavailable after ${seconds} s: ${reason}; ${what}`,
      );
    }
  }

  /**
   * A failure that looked like an outage while the dependency answers (one connection of many lost, a
   * statement its server never answered while the others do): one `warn` line, at most one a
   * `remindEveryMs`, counted apart from outages; no outage begins.
   */
  passing(reason: string, what: string): void {
    const now = this.now();
    this.passingFailures++;
    if (this.passingSaid !== undefined && now - this.passingSaid < this.remindEveryMs) return;
    this.passingSaid = now;
    const more = this.passingFailures > 1 ? ` (${this.passingFailures} such failures since the last line)` : '';
    this.passingFailures = 0;
    this.options.log.warn(
      { dependency: this.options.name, reason },
      `${this.options.name} answers, but one of its connections failed: ${reason}; ${what}${more}`,
    );
  }

  /** Now on the outage's clock: taken when a request is sent, and given to `recovered` with its answer. */
  mark(): number {
    return this.now();
  }

  /**
   * The dependency answered again: ends the outage, if one was open, with one line. An answer to a
   * request sent before the outage began (`sentAt`, a `mark`) says nothing of now: a statement that
   * completed while the server was going down would end the outage, and the next failure would open
   * a second one, two lines for one restart.
   */
  recovered(sentAt?: number): void {
    if (this.since === undefined) return;
    if (sentAt !== undefined && sentAt <= this.since) return;
    const downForMs = this.now() - this.since;
    const failures = this.failures;
    this.since = undefined;
    this.failures = 0;
    this.options.log.info(
      { dependency: this.options.name, downForMs, failures, lastReason: this.reason },
      `${this.options.name} is available again after ${(downForMs / 1000).toFixed(1)} s; ${failures} failed attempt${failures === 1 ? '' : 's'} will be or were retried`,
    );
  }
}
