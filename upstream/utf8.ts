import { Transform } from 'node:stream';

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

/**
 * For a body parsed as a stream (stream-json decodes leniently): passes the bytes on unchanged and
 * fails the stream with NotUtf8Error at the first sequence that is not UTF-8, a character cut across
 * two chunks included. Costs one validating decode of the bytes, whose text is let go at once.
 */
export function utf8Guard(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let seen = 0;
  const refuse = (e: unknown) =>
    new NotUtf8Error(`body is not UTF-8 (an invalid byte sequence within its first ${seen} bytes)`, { cause: e });
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.byteLength;
      try {
        decoder.decode(chunk, { stream: true });
      } catch (e) {
        done(refuse(e));
        return;
      }
      done(null, chunk);
    },
    flush(done) {
      try {
        decoder.decode();
      } catch (e) {
        done(refuse(e));
        return;
      }
      done();
    },
  });
}
