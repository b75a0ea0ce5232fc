import { registerSecret, scrubSecrets, REDACTED } from '../platform/secrets.ts';

/**
 * Keeps the client secret and issued tokens out of every text the client produces (error
 * messages built from service bodies, log lines). Secrets are also registered with the process
 * wide scrubber (platform/secrets.ts) so the logger removes them from any line.
 */
export class Redactor {
  readonly #secrets = new Set<string>();

  add(secret: string | undefined | null): void {
    if (!secret) return;
    this.#secrets.add(secret);
    registerSecret(secret);
  }

  scrub(text: string): string {
    let out = text;
    for (const s of this.#secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return scrubSecrets(out);
  }
}
