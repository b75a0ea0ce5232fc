import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { MAX_ROW_DEPTH, parseRowText, sameDecimal } from '../../../../domain/submission/row-json.ts';

const errorsOf = (text: string) => parseRowText(text).errors;
const jsonParses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('a row as JSON text', () => {
  it('reads what JSON.parse reads, as JSON.parse reads it', () => {
    const text = '{"key":"K\\u00e9\\n","n":[1.5,-0.25e2,0,true,false,null],"o":{"a":"\\ud83d\\ude00"}}';
    expect(parseRowText(text)).toEqual({ value: JSON.parse(text), errors: [], syntax: false });
  });

  it('refuses a member given twice, naming it: only one of them could be sent', () => {
    expect(errorsOf('{"key":"A","components":[{"unit":"KGM","unit":"TNE"}],"key":"B"}')).toEqual([
      { field: 'components[0].unit', rule: 'given twice in one object: only one could be sent; keep one' },
      { field: 'key', rule: 'given twice in one object: only one could be sent; keep one' },
    ]);
  });

  it('refuses \\u0000 and unpaired surrogate escapes in any string, member names included', () => {
    expect(errorsOf('{"components":[{"description":"cocoa\\u0000beans"}]}')).toEqual([
      {
        field: 'components[0].description',
        rule: 'holds \\u0000 (NUL): a text cannot hold it (PostgreSQL refuses it, so it could not be sent as written); remove it',
      },
    ]);
    expect(errorsOf('{"key":"a\\ud800b"}')[0]).toMatchObject({
      field: 'key',
      rule: expect.stringMatching(/^holds \\ud800, half of a surrogate pair without its other half/),
    });
    expect(errorsOf('{"key":"\\udc00"}')[0]!.field).toBe('key');
    // A member name holding NUL is named by its path, escaped.
    expect(errorsOf('{"x\\u0000y":1}')[0]!.field).toBe('(row)');
    expect(errorsOf('{"o":{"x\\u0000y":1}}')[0]!.field).toBe('o');
  });

  it('refuses a number that cannot be sent as written, and keeps those that can', () => {
    expect(errorsOf('{"quantity":12345678901234567890}')).toEqual([
      {
        field: 'quantity',
        rule: '12345678901234567890 has more digits than a number holds (about 15 significant): it would be sent as 12345678901234567000; write it with fewer digits',
      },
    ]);
    expect(errorsOf('{"q":[1e400]}')[0]).toMatchObject({ field: 'q[0]', rule: expect.stringContaining('beyond') });
    expect(errorsOf('{"q":1e-400}')[0]!.rule).toContain('it would be sent as 0');
    expect(errorsOf('{"q":[1.50,1E2,0.1,-0,1e21,123456789.123456,5e-324]}')).toEqual([]);
    expect(sameDecimal('1.50', '1.5')).toBe(true);
    expect(sameDecimal('0.1000000000000000055511151231257827', '0.1')).toBe(false);
    expect(sameDecimal('-0.0', '0')).toBe(true);
    expect(sameDecimal('-1', '1')).toBe(false);
  });

  it('refuses nesting deeper than the limit without using the stack, whatever the depth', () => {
    for (const depth of [MAX_ROW_DEPTH + 1, 10_000, 1_000_000]) {
      const text = `{"components":[{"namePairs":[{"x":${'['.repeat(depth)}${']'.repeat(depth)}}]}]}`;
      const parsed = parseRowText(text);
      // What is kept stops at the limit: the row can still be named by its key, never crash what reads it.
      expect(JSON.stringify(parsed.value)).toBe(
        `{"components":[{"namePairs":[{"x":${'['.repeat(MAX_ROW_DEPTH - 4)}${']'.repeat(MAX_ROW_DEPTH - 4)}}]}]}`,
      );
      expect(parsed.syntax).toBe(false);
      expect(parsed.errors).toHaveLength(1);
      expect(parsed.errors[0]!.rule).toBe(`nested deeper than ${MAX_ROW_DEPTH} levels (a shipment row needs 5)`);
      expect(parsed.errors[0]!.field).toBe('components[0].namePairs[0].x');
    }
    expect(parseRowText(`${'['.repeat(MAX_ROW_DEPTH)}${']'.repeat(MAX_ROW_DEPTH)}`).errors).toEqual([]);
    // Broken as well as deep: broken wins, and still no stack.
    expect(parseRowText('['.repeat(1_000_000)).syntax).toBe(true);
  });

  it('says where broken JSON breaks, showing control characters as code points', () => {
    expect(errorsOf('{"key": "x" "y"}')).toEqual([
      { field: '(row)', rule: 'not valid JSON: "," or "}" after a member at column 13, found """' },
    ]);
    expect(errorsOf('\u001b]0;title\u0007')).toEqual([
      { field: '(row)', rule: 'not valid JSON: a value at column 1, found U+001B' },
    ]);
    expect(errorsOf('{"a":"\u001b[31m"}')[0]!.rule).toBe(
      'not valid JSON: a control character written as an escape (e.g. \\n) inside a string at column 7, found U+001B',
    );
    expect(errorsOf('{"a":1}\uFEFF')[0]!.rule).toContain('found U+FEFF');
  });

  it('keeps a member named __proto__ as a member, as JSON.parse does', () => {
    const { value } = parseRowText('{"__proto__":{"polluted":true}}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('finds the field whose text covers a character (to name where bytes were not UTF-8)', () => {
    const text = '{"key":"A","components":[{"description":"ab\uFFFDc"}]}';
    expect(parseRowText(text, text.indexOf('\uFFFD')).located).toEqual({
      field: 'components[0].description',
      memberName: false,
    });
    const inName = '{"key":"A","o":{"na\uFFFDme":1}}';
    expect(parseRowText(inName, inName.indexOf('\uFFFD')).located).toEqual({ field: 'o', memberName: true });
  });
});

describe('a row as JSON text, over arbitrary input', () => {
  it('is broken exactly when JSON.parse refuses it, and otherwise equals what JSON.parse reads', () => {
    const jsonish = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'{}[],:"\\ tfnrue0123456789.eE+-ax\u0000\u001f\ud800\udc00'.split('')) }),
      fc.json(),
      fc.string(),
    );
    fc.assert(
      fc.property(jsonish, (text) => {
        const parsed = parseRowText(text);
        expect(parsed.syntax).toBe(!jsonParses(text));
        if (!parsed.syntax && parsed.errors.length === 0) expect(parsed.value).toEqual(JSON.parse(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads any JSON value as JSON.parse does, or names why it cannot be sent as written', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }), fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        const parsed = parseRowText(text);
        expect(parsed.syntax).toBe(false);
        // JSON.stringify writes the shortest form of each number and escapes only what it must.
        if (parsed.errors.length === 0) expect(parsed.value).toEqual(JSON.parse(text));
        else for (const e of parsed.errors) expect(e.rule).toMatch(/\\u0000|surrogate/);
      }),
      { numRuns: 1000 },
    );
  });
});
