import { describe, expect, it } from 'vitest';
import {
  ArrayScanner,
  ArraySplitError,
  elementText,
  MAX_SCANNED_ID_BYTES,
  splitArrayElements,
} from '../../../upstream/array-elements.ts';
import { NetworkError } from '../../../upstream/errors.ts';
import { PLOT_MAX_ARRAYS, splitSupplierPlotsPage, supplierPlotsPageIds } from '../../../upstream/paging.ts';
import { normalisePlotsSkippingInvalid } from '../../../upstream/plot-validator.ts';
import { inMemoryPage, samplePage } from './samples.ts';

const utf8 = new TextEncoder();

/** The elements as their texts, and the ids scanned. */
function split(text: string): { texts: string[]; ids: (string | null)[] } {
  const bytes = utf8.encode(text);
  const elements = splitArrayElements(bytes);
  return { texts: elements.starts.map((_, i) => elementText(bytes, elements, i)), ids: [...elements.ids] };
}

/** A page as the client holds it before parsing. */
const rawPage = (text: string, page = 3) => inMemoryPage(text, page);

describe('a JSON array split into its elements by a scan of its bytes', () => {
  it('finds every element, whatever brackets, commas, quotes and escapes its strings hold', () => {
    const elements = [
      { id: 'a', name: 'a ], [ { } , : name', note: 'quote " and backslash \\ and \\" both' },
      { id: 'b\\"]', nested: [[1, [2, { id: 'not the top' }]], { deep: { id: 'no' } }], tail: '\\' },
      [1, 2, [3]],
      'a string ] , [',
      12.5e-3,
      true,
      null,
      { name: 'no id' },
      { id: 7 },
      { id: 'first', other: 1, id2: 'x', idLast: 'escaped key wins last' },
    ];
    // JSON.stringify writes the escaped key plainly; write one by hand as the service might.
    const text = JSON.stringify(elements).replace('"idLast":', '"i\\u0064":');
    const { texts, ids } = split(text);
    expect(texts.map((t) => JSON.parse(t))).toEqual(JSON.parse(text));
    expect(text).toContain('"i\\u0064":');
    expect(ids).toEqual(['a', 'b\\"]', null, null, null, null, null, null, null, 'escaped key wins last']);
  });

  it('keeps the last of repeated top-level ids, as JSON.parse does, and a later id that is not a string wins', () => {
    expect(split('[{"id":"x","id":"y"},{"id":"x","id":3},{"id":{"id":"z"}},{"id":null}]').ids).toEqual([
      'y',
      null,
      null,
      null,
    ]);
  });

  it('reads multi-byte characters and escapes in strings and ids', () => {
    const text = JSON.stringify([{ id: 'é😀中', name: '\u0000\t\n\u2028 "\\' }, { id: 'lone \ud800 surrogate' }]);
    const { texts, ids } = split(text);
    expect(ids).toEqual(['é😀中', 'lone \ud800 surrogate']);
    expect(texts.map((t) => JSON.parse(t))).toEqual(JSON.parse(text));
  });

  it('allows whitespace anywhere JSON does, a byte-order mark, and an empty array', () => {
    const { texts, ids } = split('\ufeff \n[\r\n\t{ "id" :\n"a" } ,\n  [ ]\t,"s" , -1 \n]\n ');
    expect(texts).toEqual(['{ "id" :\n"a" }', '[ ]', '"s"', '-1']);
    expect(ids).toEqual(['a', null, null, null]);
    expect(split(' [ ] ').texts).toEqual([]);
  });

  it('says what it found where, for bytes that are not one array', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /expected '\[' to open the array, found the end after 0 bytes/],
      ['{"id":"a"}', /expected '\[' to open the array, found '\{' at byte 0/],
      ['[{"id":"a"},', /the array is not closed: found the end after 12 bytes/],
      ['[{"id":"a"}', /expected ',' or '\]' after element 0, found the end after 11 bytes/],
      ['[{"id":"a"', /element 0 is not closed/],
      ['[{"id":"a]', /a string opened at byte 7 is not closed before the end/],
      ['[{"a":1]]', /unexpected '\]' at byte 7 in element 0/],
      ['[1 2]', /expected ',' or '\]' after element 0, found '2' at byte 3/],
      ['[,1]', /expected element 0, found ',' at byte 1/],
      ['[{"a" 1}]', /expected ':' after a key in element 0, found '1' at byte 6/],
      ['[1] x', /unexpected 'x' at byte 4 after the array/],
    ];
    for (const [text, message] of cases) expect(() => splitArrayElements(utf8.encode(text)), text).toThrow(message);
    expect(() => splitArrayElements(utf8.encode('['))).toThrow(ArraySplitError);
  });
});

/** The scan of `bytes` fed in chunks cut at `cuts` (offsets), or the message it threw. */
function scanInChunks(bytes: Uint8Array, cuts: readonly number[]): unknown {
  const scanner = new ArrayScanner();
  try {
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      scanner.push(bytes.subarray(from, cut));
      from = cut;
    }
    return scanner.end();
  } catch (e) {
    return (e as Error).message;
  }
}

describe('the scan fed chunk by chunk, as a page arrives', () => {
  const texts = [
    JSON.stringify([
      { id: 'a', name: 'a ], [ { } , : name', note: 'quote " and backslash \\ and \\" both' },
      { id: 'b\\"]', nested: [[1, [2, { id: 'not the top' }]], { deep: { id: 'no' } }], tail: '\\' },
      [1, 2, [3]],
      'a string ] , [ \\" x',
      12.5e-3,
      true,
      null,
    ]).replace('"tail":', '"\\u0069\\u0064":'),
    '[{"id":"x","id":"y"},{"id":"x","id":3},{"id":{"id":"z"}},{"id":null}]',
    JSON.stringify([{ id: 'é😀中', name: '\u0000\t\n\u2028 "\\' }, { id: 'lone \ud800 surrogate' }]),
    '\ufeff \n[\r\n\t{ "id" :\n"a" } ,\n  [ ]\t,"s" , -1 \n]\n ',
    ' [ ] ',
    '',
    '[{"id":"a"},',
    '[{"id":"a"}',
    '[{"id":"a"',
    '[{"id":"a]',
    '[{"a":1]]',
    '[1 2]',
    '[,1]',
    '[{"a" 1}]',
    '[1] x',
    '[1',
    '["ab\\"',
  ];

  it('finds what the scan of the whole bytes finds, cut anywhere, byte by byte included, and throws the same', () => {
    for (const text of texts) {
      const bytes = utf8.encode(text);
      const whole = scanInChunks(bytes, []);
      for (let cut = 0; cut <= bytes.length; cut++)
        expect(scanInChunks(bytes, [cut]), `${text} cut at ${cut}`).toEqual(whole);
      expect(
        scanInChunks(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ),
        text,
      ).toEqual(whole);
    }
  });

  it('keeps no id longer than it holds of any string', () => {
    const long = 'x'.repeat(MAX_SCANNED_ID_BYTES + 1);
    const text = JSON.stringify([{ id: long }, { id: 'x'.repeat(MAX_SCANNED_ID_BYTES) }, { id: 'short' }]);
    const bytes = utf8.encode(text);
    const cuts = Array.from({ length: Math.floor(bytes.length / 1000) }, (_, i) => (i + 1) * 1000);
    expect(scanInChunks(bytes, cuts)).toMatchObject({ ids: [null, 'x'.repeat(MAX_SCANNED_ID_BYTES), 'short'] });
  });
});

describe('a page split into its plots', () => {
  it('checks each plot alone with the same rules as a whole page, and names an invalid one by its place', () => {
    const plots = samplePage(4) as Array<Record<string, unknown>>;
    plots[2]!['name'] = 42;
    const page = splitSupplierPlotsPage(rawPage(JSON.stringify(plots)));
    expect(page).toMatchObject({ page: 3, received: 4, more: false });
    expect(page.ids).toEqual(plots.map((p) => p['id']));
    const whole = normalisePlotsSkippingInvalid(JSON.parse(JSON.stringify(plots)), 'GET /plots');
    expect([0, 1, 3].map((i) => page.plotAt(i))).toEqual(whole.plots.map((plot) => ({ plot })));
    expect(whole.invalid).toEqual([{ index: 2, id: plots[2]!['id'], path: '[2].name', message: 'expected string' }]);
    expect(page.plotAt(2)).toEqual({
      invalid: { index: 2, id: plots[2]!['id'], path: '[2].name', message: 'expected string' },
    });
  });

  it('refuses a plot larger than the limit of one plot without parsing it, with its id and the rule', () => {
    const plots = samplePage(3) as Array<Record<string, unknown>>;
    plots[1]!['description'] = 'x'.repeat(3 * 1024 * 1024);
    const page = splitSupplierPlotsPage(rawPage(JSON.stringify(plots)), 2 * 1024 * 1024);
    expect(page.plotAt(1)).toEqual({
      invalid: {
        index: 1,
        id: plots[1]!['id'],
        path: '[1]',
        message: 'a plot of 3 MB of JSON is larger than the 2 MB one plot may have',
      },
    });
    expect(page.plotAt(2)).toEqual({
      plot: normalisePlotsSkippingInvalid([JSON.parse(JSON.stringify(plots[2]))], 'GET /plots').plots[0],
    });
  });

  it('refuses a plot of more arrays than the heap can parse unread, however few bytes they take', () => {
    const plots = samplePage(3) as Array<Record<string, unknown>>;
    // 1,000,001 positions of 6 bytes each: 6 MB, under the 16 MB limit, but about 64 MB once parsed.
    const dense = `{"id":"${String(plots[1]!['id'])}","geometry":{"type":"Polygon","coordinates":[[${'[0,0],'.repeat(PLOT_MAX_ARRAYS)}[0,0]]]}}`;
    const text = `[${JSON.stringify(plots[0])},${dense},${JSON.stringify(plots[2])}]`;
    const page = splitSupplierPlotsPage(rawPage(text));
    expect(page.plotAt(1)).toEqual({
      invalid: {
        index: 1,
        id: plots[1]!['id'],
        path: '[1]',
        message: `a plot of more than ${PLOT_MAX_ARRAYS} arrays (positions) is more than one plot may have`,
      },
    });
    expect(page.plotAt(2)).toEqual({
      plot: normalisePlotsSkippingInvalid([JSON.parse(JSON.stringify(plots[2]))], 'GET /plots').plots[0],
    });
  });

  it('raises a retryable error naming the page for a body that is not one array, or a plot that is not JSON', () => {
    const truncated = () => splitSupplierPlotsPage(rawPage('[{"id":"a"},{"id":"b", "geometry": [[1,', 7));
    expect(truncated).toThrow(NetworkError);
    expect(truncated).toThrow(/page 7: response body is not a JSON array \(element 1 is not closed/);
    const garbled = splitSupplierPlotsPage(rawPage('[{"id":"a"},{"id":"b","n":tru}]', 8));
    expect(() => garbled.plotAt(1)).toThrow(/page 8: plot #1 is not JSON/);
    expect(() => garbled.plotAt(1)).toThrow(NetworkError);
  });

  it('gives a reader of ids the same ids and invalid plots whether the page is parsed whole or plot by plot', () => {
    const plots = samplePage(6) as Array<Record<string, unknown>>;
    plots[1]!['name'] = 42;
    plots[4]!['id'] = plots[0]!['id'];
    const text = JSON.stringify(plots);
    const whole = supplierPlotsPageIds(rawPage(text));
    expect(whole.ids).toHaveLength(5);
    expect(whole.invalid).toHaveLength(1);
    expect(supplierPlotsPageIds(rawPage(text), 0)).toEqual(whole);
  });
});
