/**
 * Where an archived PDF lives and what counts as one. Pure: archive.ts does the file work.
 *
 * Layout under the archive directory (DDSYNC_PDF_ARCHIVE_DIR):
 *   <sha[0..2]>/<sha>.pdf   the content, named by its SHA-256 (identical PDFs are stored once)
 *   tmp/                    downloads in progress; renamed into place once complete and checked
 */

/** Every PDF file starts with these bytes (ISO 32000: the header `%PDF-1.x`). */
export const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');

export const TEMP_DIR = 'tmp';

/** The path of a PDF's content, relative to the archive directory: `ab/ab12…ef.pdf`. */
export function contentPath(sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a SHA-256 in lower-case hex: "${sha256}"`);
  return `${sha256.slice(0, 2)}/${sha256}.pdf`;
}

/** Whether the first bytes of a body (at least PDF_MAGIC's length of them, if it has that many) are a PDF's. */
export function startsLikePdf(head: Uint8Array): boolean {
  if (head.length < PDF_MAGIC.length) return false;
  return PDF_MAGIC.equals(Buffer.from(head.buffer, head.byteOffset, PDF_MAGIC.length));
}

/** A short, printable preview of a body that is not a PDF (an HTML error page of a proxy, say). */
export function describeHead(head: Uint8Array): string {
  if (head.length === 0) return 'an empty body';
  const text = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, 40))
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return `a body starting "${text}"`;
}
