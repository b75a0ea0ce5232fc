/**
 * A body's bytes as text, refused when they are not UTF-8. JSON between systems is UTF-8 (RFC 8259);
 * a lenient decoder (Response.text(), a default TextDecoder) would turn each invalid sequence into
 * U+FFFD without a word, and the warehouse would store a value the service never sent. A byte-order
 * mark at the start is dropped, as Response.text() does.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export class NotUtf8Error extends Error {
  override name = 'NotUtf8Error';
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (e) {
    throw new NotUtf8Error(`body is not UTF-8 (${bytes.byteLength} bytes, an invalid byte sequence in them)`, {
      cause: e,
    });
  }
}
