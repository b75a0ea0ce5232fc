import { describe, expect, it } from 'vitest';
import { copyText, escapeCopy } from '../../../../warehouse/refresh/copy-text.ts';

interface Row {
  id: string;
  n: number | null;
  ok: boolean;
  tags: string[] | null;
  doc: string | null;
}
const COLUMNS = { id: 'text', n: 'float8', ok: 'boolean', tags: 'text[]', doc: 'jsonb' } as const;

const all = (rows: Row[], chunk?: number) => [...copyText(rows, COLUMNS, chunk)].join('');

describe('COPY text of the refresh rows', () => {
  it('escapes what COPY reads as structure and stores NUL, which Postgres text cannot hold, as U+FFFD', () => {
    expect(escapeCopy('a\tb\nc\rd\\e\u0000f')).toBe('a\\tb\\nc\\rd\\\\e\ufffdf');
  });

  it('writes one line per row, columns in the given order, \\N for null', () => {
    const text = all([
      { id: 'p-1', n: 1.5, ok: true, tags: ['a'], doc: '{"k":"v"}' },
      { id: 'p-2', n: null, ok: false, tags: null, doc: null },
    ]);
    expect(text).toBe('p-1\t1.5\tt\t{"a"}\t{"k":"v"}\np-2\t\\N\tf\t\\N\t\\N\n');
  });

  it('quotes every array element, so commas, braces, quotes and backslashes stay inside it', () => {
    const text = all([{ id: 'p', n: 0, ok: true, tags: ['x,y', 'q"uote', 'back\\slash', '{b}'], doc: null }]);
    // Array literal {"x,y","q\"uote","back\\slash","{b}"}, then every backslash doubled for COPY.
    expect(text.split('\t')[3]).toBe('{"x,y","q\\\\"uote","back\\\\\\\\slash","{b}"}');
  });

  it('keeps JSON text as JSON but replaces the escapes jsonb refuses (NUL, a lone surrogate) by U+FFFD', () => {
    const doc = JSON.stringify({ a: 'x\u0000y', b: 'tab\there', c: '\ud800' });
    const field = all([{ id: 'p', n: 0, ok: true, tags: [], doc }])
      .trimEnd()
      .split('\t')[4]!;
    expect(field).toBe('{"a":"x\\\\ufffdy","b":"tab\\\\there","c":"\\\\ufffd"}');
  });

  it('splits long input into chunks at row boundaries, none of them large', () => {
    const rows: Row[] = Array.from({ length: 2000 }, (_, i) => ({ id: `p-${i}`, n: i, ok: true, tags: [], doc: null }));
    const chunks = [...copyText(rows, COLUMNS, 1024)];
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.endsWith('\n')).toBe(true);
      expect(chunk.length).toBeLessThan(1024 + 100);
    }
    expect(chunks.join('').split('\n').length - 1).toBe(2000);
  });
});
