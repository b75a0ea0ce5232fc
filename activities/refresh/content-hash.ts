import { createHash } from 'node:crypto';

/**
 * Change detection: a row is rewritten only when this hash of its content differs from the stored
 * one. md5 is enough here (it detects change, it guards nothing) and costs microseconds per row.
 */
export function contentHash(value: unknown): string {
  return createHash('md5').update(JSON.stringify(value)).digest('base64url');
}
