import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream';
import { parser } from 'stream-json';
import { streamArray } from 'stream-json/streamers/stream-array.js';

/**
 * The rows of a shipments file, streamed so a file of any length is read in bounded memory:
 * NDJSON (one JSON object per line; blank lines ignored) or one JSON array (detected by its first
 * character). A line that is not JSON is a row with a parse error (the others go on); a JSON array
 * that breaks off is a FileFormatError (nothing of the file may be sent: it is not what was meant).
 */

export interface FileRow {
  /** Line of an NDJSON file, or position (1-based) of the item in a JSON array. */
  line: number;
  value?: unknown;
  /** Set when the line is not valid JSON. */
  parseError?: string;
}

export class FileFormatError extends Error {
  override name = 'FileFormatError';
}

export type FileFormat = 'ndjson' | 'json-array';

export async function detectFormat(path: string): Promise<FileFormat> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return 'ndjson';
      const text = buffer
        .subarray(0, bytesRead)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
      const first = /\S/.exec(text);
      if (first) return first[0] === '[' ? 'json-array' : 'ndjson';
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

export async function* readShipmentFile(path: string): AsyncGenerator<FileRow> {
  if ((await detectFormat(path)) === 'json-array') yield* readJsonArray(path);
  else yield* readNdjson(path);
}

async function* readNdjson(path: string): AsyncGenerator<FileRow> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line++;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(text) as unknown };
    } catch (e) {
      yield { line, parseError: `not valid JSON (${(e as Error).message})` };
    }
  }
}

async function* readJsonArray(path: string): AsyncGenerator<FileRow> {
  // pipeline: an error of any stage (the file, the parser) destroys them all and reaches the loop
  // below through `items`; leaving the loop early destroys them all too. Its callback has nothing
  // left to do.
  const items = pipeline(createReadStream(path), parser.asStream(), streamArray.asStream(), () => undefined);
  let line = 0;
  try {
    for await (const item of items as AsyncIterable<{ key: number; value: unknown }>) {
      line = item.key + 1;
      yield { line, value: item.value };
    }
  } catch (e) {
    throw new FileFormatError(`the JSON array breaks off after item ${line}: ${(e as Error).message}`);
  }
}
