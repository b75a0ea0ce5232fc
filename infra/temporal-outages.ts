import { tcpConnect } from './tcp-connect.ts';
import type { Logger } from '../platform/logger.ts';
import { Outage } from '../platform/outage.ts';

/**
 * Whether an error (a client call's, or a line the SDK's native core logs) says Temporal's frontend
 * cannot be reached now: gRPC UNAVAILABLE (14), a connection refused or dropped. Not a refusal (a
 * wrong namespace or credentials answer with another code) and not a workflow's own failure.
 */
export function temporalUnreachable(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    const message = current instanceof Error ? current.message : typeof current === 'string' ? current : '';
    if (
      code === 14 ||
      /\bUNAVAILABLE\b|The service is currently unavailable|tcp connect error|Connection refused|ECONNREFUSED|No connection established|Connection dropped|transport error/i.test(
        message,
      )
    )
      return /Connection refused|ECONNREFUSED/i.test(message) ? 'connection refused' : 'no answer from the frontend';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Lines of the SDK's native core that only repeat that the server is away (each failed poll or completion). */
const CORE_CONNECTIVITY =
  /^gRPC call \w+ retried \d+ times$|^Error while completing workflow activation$|^Network error while completing activity$|^Error while polling/;

/** Whether a Temporal runtime log entry only says, once more, that the server cannot be reached. */
export function isConnectivityNoise(message: string, meta: Record<string, unknown> | undefined): string | undefined {
  if (!CORE_CONNECTIVITY.test(message)) return undefined;
  return temporalUnreachable(String(meta?.err ?? meta?.error ?? ''));
}

/**
 * The worker's record of Temporal outages: the native core logs every failed poll and completion
 * (dozens of lines a minute); they become one line when the outage begins and one when it is over.
 * Over means a TCP probe of the frontend answers and then no call fails for `settleMs`: a server
 * that is starting accepts connections before it answers calls, and a probe alone called that a
 * recovery, so one restart became two outages on a busy machine. The core itself retries its polls
 * and completions for as long as it takes: the worker does not need to be restarted.
 */
export class TemporalOutage {
  private readonly outage: Outage;
  private probing = false;
  private settling: NodeJS.Timeout | undefined;

  constructor(
    log: Logger,
    private readonly address: string,
    private readonly probeEveryMs = 1_000,
    private readonly settleMs = 5_000,
    /** Resolves when the frontend accepts a connection (a test gives its own). */
    private readonly probeOnce: (address: string) => Promise<unknown> = (address) => tcpConnect(address, 2_000),
  ) {
    this.outage = new Outage({ name: 'Temporal', log });
  }

  /** While Temporal is away: warnings it causes (a workflow task held open, TMPRL1104) are part of this outage. */
  get down(): boolean {
    return this.outage.down;
  }

  failed(reason: string): void {
    // A failure while the server was settling: the same outage goes on.
    if (this.settling) {
      clearTimeout(this.settling);
      this.settling = undefined;
    }
    this.outage.failed(`${reason} at ${this.address}`, 'the worker keeps retrying and carries on when it answers');
    if (this.probing) return;
    this.probing = true;
    const probe = () => {
      this.probeOnce(this.address).then(
        () => {
          this.probing = false;
          this.settling = setTimeout(() => {
            this.settling = undefined;
            this.outage.recovered();
          }, this.settleMs).unref();
        },
        () => setTimeout(probe, this.probeEveryMs).unref(),
      );
    };
    setTimeout(probe, this.probeEveryMs).unref();
  }
}
