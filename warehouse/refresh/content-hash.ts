import { hash } from 'node:crypto';

/**
 * Change detection: a row is rewritten only when this hash of its content differs from the stored
 * one. sha1 is enough (it detects change, it guards nothing); it measured faster than md5 here.
 */
export function contentHash(value: unknown): string {
  return hash('sha1', JSON.stringify(value), 'base64url');
}
