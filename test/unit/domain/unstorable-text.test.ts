import { describe, it, expect } from 'vitest';
import {
  mayHoldUnstorable,
  NUL_RULE,
  storableText,
  SURROGATE_RULE,
  unstorableIn,
  unstorableRule,
} from '../../../domain/unstorable-text.ts';
import { storable } from '../../../warehouse/refresh/json-recordset.ts';
import { escapeCopy } from '../../../warehouse/refresh/copy-text.ts';

describe('text the warehouse cannot hold', () => {
  it('finds a NUL and lone surrogates, and lets a surrogate pair and other odd text be', () => {
    expect(unstorableRule('a\u0000b')).toBe(NUL_RULE);
    expect(unstorableRule('x\ud800')).toBe(SURROGATE_RULE);
    expect(unstorableRule('\udc00x')).toBe(SURROGATE_RULE);
    // A pair written the wrong way round is two lone halves.
    expect(unstorableRule('\udc00\ud800')).toBe(SURROGATE_RULE);
    expect(unstorableRule('\u0000\ud800')).toMatch(/NUL.*lone/);
    for (const fine of ['😀', 'a\ud83d\ude00b', '\\u0000', '\t\n\\.\\N', '\u200f\ufeffe\u0301', '']) {
      expect(unstorableRule(fine)).toBeNull();
      expect(storableText(fine)).toBe(fine);
    }
    expect(storableText('a\u0000b\ud800c\udfff😀')).toBe('a\ufffdb\ufffdc\ufffd😀');
  });

  it('names each value by its path, keys and nested arrays included, with its JSON text as sent', () => {
    const plot = {
      id: 'p1',
      name: 'North\u0000field',
      customData: {
        'a\u0000b': 1,
        tags: ['ok', ['deep', 'x\ud800']],
        'odd key': { inner: '\udc00' },
        emoji: '😀',
      },
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [1, 2],
            [3, 4],
          ],
        ],
      },
    };
    expect(unstorableIn(plot)).toEqual([
      { field: 'name', rule: NUL_RULE, sent: '"North\\u0000field"' },
      { field: 'customData["a\\u0000b"]', rule: `key: ${NUL_RULE}`, sent: '"a\\u0000b"' },
      { field: 'customData.tags[1][1]', rule: SURROGATE_RULE, sent: '"x\\ud800"' },
      { field: 'customData["odd key"].inner', rule: SURROGATE_RULE, sent: '"\\udc00"' },
    ]);
    // The path and the value as sent are themselves storable text.
    for (const r of unstorableIn(plot)) {
      expect(unstorableRule(r.field)).toBeNull();
      expect(unstorableRule(r.sent)).toBeNull();
    }
    expect(JSON.parse(unstorableIn(plot)[0]!.sent)).toBe('North\u0000field');
  });

  it('walks 60-deep nesting and a key under a hostile key', () => {
    let deep: unknown = 'end\u0000';
    for (let i = 0; i < 60; i++) deep = i % 2 ? [deep] : { k: deep };
    const found = unstorableIn(deep, 'customData');
    expect(found).toHaveLength(1);
    expect(found[0]!.field.startsWith('customData[0].k[0].k')).toBe(true);
    expect(unstorableIn({ '\ud800': { '\u0000': 'v' } }).map((r) => r.field)).toEqual([
      '["\\ud800"]',
      '["\\ud800"]["\\u0000"]',
    ]);
  });

  it('gates on JSON text: the escapes of NUL and surrogates only', () => {
    expect(mayHoldUnstorable(JSON.stringify({ name: 'a\u0000' }))).toBe(true);
    expect(mayHoldUnstorable(JSON.stringify({ name: 'a\ud800' }))).toBe(true);
    expect(mayHoldUnstorable('{"name":"\\uDBFF"}')).toBe(true);
    // A pair as two escapes, or an escaped backslash before u0000, opens the gate; the walk finds nothing.
    expect(mayHoldUnstorable('"\\ud83d\\ude00"')).toBe(true);
    expect(unstorableIn(JSON.parse('"\\ud83d\\ude00"'))).toEqual([]);
    expect(unstorableIn(JSON.parse(JSON.stringify('\\u0000')))).toEqual([]);
    for (const plain of [
      JSON.stringify({ name: 'Café\t"x"\\N\\.', tags: ['😀', '\u200f', '\ufeff'] }),
      '{"a":"\\u00e9\\u0001"}',
    ]) {
      expect(mayHoldUnstorable(plain)).toBe(false);
    }
  });

  it('encodes what it cannot hold as U+FFFD in COPY text and JSON batches alike', () => {
    expect(escapeCopy('a\u0000b\tc')).toBe('a\ufffdb\\tc');
    expect(JSON.parse(storable(JSON.stringify({ 'k\u0000': 'v\ud800', e: '\\u0000' })))).toEqual({
      'k\ufffd': 'v\ufffd',
      e: '\\u0000',
    });
  });
});
