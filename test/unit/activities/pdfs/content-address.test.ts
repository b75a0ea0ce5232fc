import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { contentPath, describeHead, startsLikePdf } from '../../../../activities/pdfs/content-address.ts';

describe('content addresses of archived PDFs', () => {
  it('puts a PDF under the first two hex digits of its SHA-256', () => {
    const sha = createHash('sha256').update('%PDF-1.4 hello').digest('hex');
    expect(contentPath(sha)).toBe(`${sha.slice(0, 2)}/${sha}.pdf`);
    expect(contentPath('00'.repeat(32))).toBe(`00/${'00'.repeat(32)}.pdf`);
  });

  it('refuses anything that is not a lower-case hex SHA-256 (no path tricks)', () => {
    expect(() => contentPath('../../etc/passwd')).toThrow(/not a SHA-256/);
    expect(() => contentPath('AB'.repeat(32))).toThrow(/not a SHA-256/);
    expect(() => contentPath('ab'.repeat(31))).toThrow(/not a SHA-256/);
  });

  it('recognises the %PDF- header and nothing else', () => {
    expect(startsLikePdf(Buffer.from('%PDF-1.7\n…'))).toBe(true);
    expect(startsLikePdf(Buffer.from('%PDF-'))).toBe(true);
    expect(startsLikePdf(Buffer.from('%PDF'))).toBe(false);
    expect(startsLikePdf(Buffer.from('<html><body>502 Bad Gateway'))).toBe(false);
    expect(startsLikePdf(Buffer.from(' %PDF-1.4'))).toBe(false);
    expect(startsLikePdf(new Uint8Array(0))).toBe(false);
    // A view into a larger buffer is read from its own start.
    const big = Buffer.from('xx%PDF-1.4');
    expect(startsLikePdf(big.subarray(2))).toBe(true);
  });

  it('describes a body that is no PDF in printable text', () => {
    expect(
      describeHead(Buffer.from('<html>\n<body>Bad Gateway</body></html> and much more after forty characters')),
    ).toBe('a body starting "<html>.<body>Bad Gateway</body></html> a"');
    expect(describeHead(new Uint8Array(0))).toBe('an empty body');
  });
});
