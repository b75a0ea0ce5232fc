/**
 * Scrubs secrets out of any text before it leaves the process (logs, error messages, CLI output).
 * Two nets: values registered at run time (the client secret, issued tokens, webhook secrets),
 * and shapes that are secret whatever their value (bearer tokens, JWTs, Svix secrets).
 */
const known = new Set<string>();

export const REDACTED = '[redacted]';

const SHAPES: Array<[RegExp, string]> = [
  [/(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, REDACTED],
  [/(postgres(?:ql)?:\/\/[^:/@\s]+:)[^@\s]+(@)/gi, `$1${REDACTED}$2`],
  // A password in an http(s) URL (DDSYNC_UPSTREAM_URL=https://u:pw@…); a port and path are not one.
  [/(https?:\/\/[^:/@\s]+:)[^@\s/]+(@)/gi, `$1${REDACTED}$2`],
];

export function registerSecret(value: string | undefined | null): void {
  // Very short values would scrub ordinary words; secrets are never that short.
  if (value && value.length >= 6) known.add(value);
}

export function scrubSecrets(text: string): string {
  let out = text;
  for (const value of known) {
    if (out.includes(value)) out = out.split(value).join(REDACTED);
  }
  for (const [shape, replacement] of SHAPES) out = out.replace(shape, replacement);
  return out;
}
