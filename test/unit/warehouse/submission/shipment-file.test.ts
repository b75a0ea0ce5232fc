import { describe, it, expect } from 'vitest';
import { isUtf8 } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FileFormatError,
  FileReadError,
  type FileRow,
  MAX_ROW_BYTES,
  firstInvalidUtf8,
  readShipmentFile,
  shipmentRowsOf,
} from '../../../../warehouse/submission/shipment-file.ts';
import { scratchDir } from '../../../support/scratch.ts';

const rowsOf = (bytes: Buffer | string) => [
  ...shipmentRowsOf([typeof bytes === 'string' ? Buffer.from(bytes) : bytes]),
];
async function readAll(path: string): Promise<FileRow[]> {
  const rows: FileRow[] = [];
  for await (const row of readShipmentFile(path)) rows.push(row);
  return rows;
}
const row = (key: string) => JSON.stringify({ key, activityType: 'IMPORT' });

describe('a shipments file: bytes to rows', () => {
  it('refuses a line whose bytes are not UTF-8, naming the line and the field; the others go on', () => {
    const bad = Buffer.concat([Buffer.from('{"key":"U8-2-'), Buffer.from([0xff, 0xfe, 0xfd]), Buffer.from('"}')]);
    const rows = rowsOf(Buffer.concat([Buffer.from(`${row('U8-1')}\n`), bad, Buffer.from(`\n${row('U8-3')}\n`)]));
    expect(rows).toEqual([
      { line: 1, value: { key: 'U8-1', activityType: 'IMPORT' } },
      {
        line: 2,
        errors: [
          {
            field: 'key',
            rule: 'bytes that are not UTF-8 (0xFF 0xFE 0xFD at byte 14 of the line): a shipments file must be UTF-8 text, and what they mean is a guess; this row is not sent',
          },
        ],
      },
      { line: 3, value: { key: 'U8-3', activityType: 'IMPORT' } },
    ]);
    // Overlong forms, surrogates encoded as UTF-8 and a cut sequence are not UTF-8 either.
    for (const bytes of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xf4, 0x90, 0x80, 0x80],
    ]) {
      const line = Buffer.concat([Buffer.from('{"key":"'), Buffer.from(bytes), Buffer.from('"}')]);
      expect(rowsOf(line)[0]!.errors?.[0]?.field).toBe('key');
    }
    // Bytes in a member name, and outside any string.
    const inName = Buffer.concat([Buffer.from('{"o":{"k'), Buffer.from([0x80]), Buffer.from('":1}}')]);
    expect(rowsOf(inName)[0]!.errors![0]).toMatchObject({
      field: 'o',
      rule: expect.stringMatching(/^a member name holds bytes that are not UTF-8 \(0x80 at byte 9 of the line\)/),
    });
    const outside = rowsOf(Buffer.concat([Buffer.from('{"k":1'), Buffer.from([0xff]), Buffer.from('}')]))[0]!;
    expect(outside.errors!.map((e) => e.field)).toEqual(['(row)', '(row)']);
    expect(outside.errors![1]!.rule).toContain('found U+FFFD');
  });

  it('keeps U+FFFD that the bytes hold, and skips a byte order mark only at the very start', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${row('A\uFFFD')}\r\n\r\n`)]);
    expect(rowsOf(withBom)).toEqual([{ line: 1, value: { key: 'A\uFFFD', activityType: 'IMPORT' } }]);
    const later = rowsOf(`${row('A')}\n\uFEFF${row('B')}\n`);
    expect(later[1]!.errors![0]!.rule).toBe('not valid JSON: a value at column 1, found U+FEFF');
  });

  it('reads the same rows however the bytes are cut into chunks', () => {
    const text = Buffer.from(`\uFEFF\n\n  ${row('é-1')}\r\n\n${row('😀-2')}\n{bad\n[${row('3')}]`);
    const whole = [...shipmentRowsOf([text])];
    expect(whole.map((r) => r.line)).toEqual([3, 5, 6, 7]);
    expect(whole[2]!.errors![0]!.rule).toBe('not valid JSON: a member name in double quotes at column 2, found "b"');
    for (let size = 1; size <= 7; size++) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.subarray(i, i + size));
      expect([...shipmentRowsOf(chunks)]).toEqual(whole);
    }
  });

  it('refuses a line longer than the limit unread, and goes on with the next', () => {
    const long = `{"key":"${'x'.repeat(MAX_ROW_BYTES)}"}`;
    const rows = rowsOf(`${long}\n${row('after')}`);
    expect(rows).toEqual([
      {
        line: 1,
        errors: [
          {
            field: '(row)',
            rule: `the line is ${long.length} bytes long, more than the 16 MiB a row may have: not read`,
          },
        ],
      },
      { line: 2, value: { key: 'after', activityType: 'IMPORT' } },
    ]);
  });

  it('takes a JSON array item by item; a refused item does not stop the others', () => {
    const bad = Buffer.concat([Buffer.from('{"key":"'), Buffer.from([0xc3]), Buffer.from('"}')]);
    const text = Buffer.concat([
      Buffer.from(`\uFEFF \n[ ${row('a,]}"')} ,\n`),
      bad,
      Buffer.from(`, {"key":"x","key":"y"}, "s", [[["]"]]] ]\n`),
    ]);
    const rows = rowsOf(text);
    expect(rows.map((r) => [r.line, r.value, r.errors?.map((e) => e.field)])).toEqual([
      [1, { key: 'a,]}"', activityType: 'IMPORT' }, undefined],
      [2, undefined, ['key']],
      [3, { key: 'y' }, ['key']],
      [4, 's', undefined],
      [5, [[[']']]], undefined],
    ]);
    expect(rowsOf(' [ ] ')).toEqual([]);
  });

  it('refuses the whole of a JSON array that is broken: where an item ends is then a guess', () => {
    const broken = (text: string) => {
      try {
        rowsOf(text);
      } catch (error) {
        expect(error).toBeInstanceOf(FileFormatError);
        return (error as Error).message;
      }
      throw new Error(`accepted: ${text}`);
    };
    expect(broken('[{"key":"a"},\n{"key": "b" "c"}]')).toBe(
      '(bytes): item 2 (from line 2) is broken (not valid JSON: "," or "}" after a member at column 13, found """), so where it ends is a guess; nothing of the file is sent',
    );
    expect(broken('[{"key":"a"}, {"key":"b"')).toBe(
      '(bytes): the JSON array breaks off after item 1: the file ends inside item 2 (from line 1); nothing of the file is sent',
    );
    expect(broken('[1,]')).toMatch(/^\(bytes\): the JSON array is broken at line 1: a "," is followed by "]"/);
    expect(broken('[,1]')).toMatch(/an item is missing before ","/);
    expect(broken('[1]\n{"key":"more"}')).toMatch(/there is more after the array's closing \] \(line 2\)/);
    expect(broken('[1,')).toMatch(/breaks off after item 1: the file ends before its closing \]/);
  });

  it('reads a named pipe once, as a stream', async () => {
    const dir = scratchDir('fifo');
    const fifo = join(dir, 'shipments.pipe');
    execFileSync('mkfifo', [fifo]);
    const writer = createWriteStream(fifo);
    writer.end(`${row('P-1')}\n${row('P-2')}\n`);
    expect(await readAll(fifo)).toEqual([
      { line: 1, value: { key: 'P-1', activityType: 'IMPORT' } },
      { line: 2, value: { key: 'P-2', activityType: 'IMPORT' } },
    ]);
  });

  it('names the file it cannot read, and why', async () => {
    const dir = scratchDir('unreadable');
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    await expect(readAll(folder)).rejects.toThrow(new FileReadError(folder, 'is a directory, not a file of shipments'));
    await expect(readAll(join(dir, 'missing.ndjson'))).rejects.toThrow(
      `${join(dir, 'missing.ndjson')}: cannot be read: no such file (ENOENT)`,
    );
    const odd = join(dir, 'odd\u001b[2Jname');
    await expect(readAll(odd)).rejects.toThrow(`${join(dir, 'odd\\u001b[2Jname')}: cannot be read: no such file`);
    const empty = join(dir, 'empty.ndjson');
    writeFileSync(empty, '');
    expect(await readAll(empty)).toEqual([]);
  });

  it('finds the first byte that is not UTF-8 as Node does', () => {
    for (const bytes of [[0x41], [0xc3, 0xa9], [0xc3], [0xe0, 0x80, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0x41, 0xff]]) {
      const b = Uint8Array.from(bytes);
      expect(firstInvalidUtf8(b) === -1).toBe(isUtf8(b));
    }
    expect(firstInvalidUtf8(Uint8Array.from([0x41, 0x42, 0xe2, 0x28, 0xa1]))).toBe(2);
  });
});
