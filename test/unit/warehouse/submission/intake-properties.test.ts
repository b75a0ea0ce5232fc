import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { checkFileRow } from '../../../../warehouse/submission/intake.ts';
import { printable } from '../../../../domain/submission/printable.ts';
import {
  FileFormatError,
  firstInvalidUtf8,
  type FileRow,
  shipmentRowsOf,
} from '../../../../warehouse/submission/shipment-file.ts';
import { storable } from '../../../../warehouse/refresh/json-recordset.ts';

/**
 * The intake of a shipments file (shipment-file.ts → row-json.ts → shipment-rules.ts → checkFileRow)
 * over arbitrary bytes and arbitrary JSON: it never throws on an NDJSON file; every line is accepted
 * with every field equal to what its bytes say (read by an independent reader: Node's UTF-8 check,
 * TextDecoder and JSON.parse), or refused with its line number, each reason printable.
 */

const NDJSON_LINE_END = 0x0a;
const whitespaceOnly = (b: Uint8Array) => b.every((c) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a);

/** The file's lines, as an independent reader cuts them: (line number, bytes), blank lines left out. */
function linesOf(file: Uint8Array): Array<{ line: number; bytes: Uint8Array }> {
  let body = file;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) body = body.subarray(3);
  const out: Array<{ line: number; bytes: Uint8Array }> = [];
  let start = 0;
  let line = 1;
  for (let i = 0; i <= body.length; i++) {
    if (i === body.length || body[i] === NDJSON_LINE_END) {
      const bytes = body.subarray(start, i);
      if (!whitespaceOnly(bytes)) out.push({ line, bytes });
      line++;
      start = i + 1;
    }
  }
  return out;
}

/** What the row's bytes say, read by another reader: undefined when they are not UTF-8 or not JSON. */
function independentRead(bytes: Uint8Array): { value: unknown } | undefined {
  if (!isUtf8(bytes)) return undefined;
  try {
    return { value: JSON.parse(new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)) };
  } catch {
    return undefined;
  }
}

const count = (text: string, c: string) => text.split(c).length - 1;

/** Members (a colon each) and number literals outside strings: what the text says, JSON.parse aside. */
function outsideStrings(text: string): { members: number; numbers: string[] } {
  let members = 0;
  const numbers: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === ':') members++;
    else if (/[-0-9]/.test(c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(text.slice(i))!;
      numbers.push(m[0]);
      i += m[0].length - 1;
    }
  }
  return { members, numbers };
}
/** Members of a parsed value, counted without recursion. */
function membersOf(value: unknown): number {
  let n = 0;
  const todo = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (v !== null && typeof v === 'object') {
      if (!Array.isArray(v)) n += Object.keys(v).length;
      todo.push(...Object.values(v));
    }
  }
  return n;
}
/** Numbers the generators write that a double cannot hold as written. */
const NOT_AS_WRITTEN = new Set(['12345678901234567890', '1e400', '1e-400', '0.1000000000000000055511151231257827']);

/** The intake's verdict on every row of a file, with the checks every verdict must pass. */
function intakeOf(file: Uint8Array, chunkSize = 7): Array<{ row: FileRow; verdict: ReturnType<typeof checkFileRow> }> {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < file.length; i += chunkSize) chunks.push(file.subarray(i, i + chunkSize));
  const out = [...shipmentRowsOf(chunks)].map((row) => ({ row, verdict: checkFileRow(row) }));
  const lines = linesOf(file);
  // NDJSON files only here: one verdict per non-blank line, in order, named by its line number.
  expect(out.map((o) => o.row.line)).toEqual(lines.map((l) => l.line));
  out.forEach(({ verdict }, i) => {
    const { bytes } = lines[i]!;
    if (!verdict.ok) {
      expect(verdict.errors.length).toBeGreaterThan(0);
      for (const e of verdict.errors) {
        expect(printable(e.field)).toBe(e.field);
        expect(printable(e.rule)).toBe(e.rule);
      }
      if (verdict.key !== null) expect(printable(verdict.key)).toBe(verdict.key);
      return;
    }
    // Accepted: the bytes are UTF-8 and JSON, and every field sent is what they say.
    expect(isUtf8(bytes)).toBe(true);
    const read = independentRead(bytes);
    expect(read).toBeDefined();
    const v = read!.value as Record<string, unknown>;
    // Every member and number of the text is in what is sent: none given twice, none changed.
    const said = outsideStrings(new TextDecoder().decode(bytes));
    expect(said.members).toBe(membersOf(v));
    for (const n of said.numbers) expect(NOT_AS_WRITTEN.has(n.replace(/^-/, ''))).toBe(false);
    const { customId, components, ...rest } = verdict.body;
    expect(customId).toBe(v['key']);
    expect(verdict.key).toBe(v['key']);
    expect(components).toEqual(v['components']);
    const { key: _key, components: _components, ...others } = v;
    expect(rest).toEqual(others);
    // No U+FFFD that the bytes do not hold; and the warehouse stores the body as it is.
    const sent = JSON.stringify(verdict.body);
    expect(count(sent, '\uFFFD')).toBeLessThanOrEqual(count(JSON.stringify(v), '\uFFFD'));
    expect(storable(sent)).toBe(sent);
  });
  return out;
}

// Shipment-shaped rows: valid ones with arbitrary text wherever free text goes (NUL, unpaired
// surrogates, controls, U+FFFD, any code point), and any-shaped ones with arbitrary JSON anywhere.
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyText = fc.oneof(
  fc.string({ unit: anyUnit, minLength: 1, maxLength: 12 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  fc.constantFrom('cocoa beans', 'é', '😀', '\uFFFD', '\u0000', '\ud800', 'a\u001b[2Jb', '"\\'),
);
/** A number as written in the file: `{ written }` is put in the text as it stands. */
const written = (text: string) => ({ written: text });
const quantity = fc.oneof(
  fc.double({ min: 1e-6, max: 1e15, noNaN: true }),
  fc.integer({ min: 1, max: 1_000_000 }),
  fc
    .constantFrom('1.50', '3', '0.1', '12345678901234567890', '1e400', '1e-400', '0.1000000000000000055511151231257827')
    .map(written),
);
const validComponent = fc.record(
  {
    hsn: fc.constantFrom('1801', '18010000', '090111', '4001'),
    quantity,
    unit: fc.constantFrom('KGM', 'TNE', 'PCS'),
    description: anyText,
    supplierBusinessId: anyText,
    plotIds: fc.array(anyText, { maxLength: 2 }),
    namePairs: fc.array(fc.record({ commonName: anyText, scientificName: anyText }), { maxLength: 2 }),
    dateOfProduction: fc.constantFrom('2024-02-29', '2025-01-01'),
  },
  { requiredKeys: ['hsn', 'quantity', 'unit', 'supplierBusinessId'] },
);
const validShipment = fc.record(
  {
    key: fc.string({ unit: fc.constantFrom(...'AZ09-_é😀'), minLength: 1, maxLength: 10 }).map((k) => `K${k}`),
    activityType: fc.constantFrom('IMPORT', 'EXPORT', 'TRADE', 'DOMESTIC'),
    countryOfActivity: fc.constantFrom('NL', 'DE', 'XI'),
    legalEntityId: anyText,
    isGeoLocationConfidential: fc.boolean(),
    customData: fc.dictionary(
      anyText.map((k) => `k${k}`),
      fc.oneof(anyText, fc.integer(), fc.boolean(), quantity),
      { maxKeys: 3 },
    ),
    components: fc.array(validComponent, { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['key', 'activityType', 'countryOfActivity', 'components'] },
);
const anyShipment = fc.record(
  {
    key: fc.oneof(anyText, fc.jsonValue({ maxDepth: 1 })),
    activityType: fc.constantFrom('IMPORT', 'SELL'),
    countryOfActivity: fc.constantFrom('NL', 'US'),
    customData: fc.jsonValue({ maxDepth: 2 }),
    components: fc.array(fc.oneof(validComponent, fc.jsonValue({ maxDepth: 3 })), { maxLength: 2 }),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: ['key'] },
);
/**
 * A row as JSON text, its numbers as written (some cannot be held exactly, some are out of range),
 * sometimes with a member given twice (in the row, a component or customData).
 */
const rowText = fc
  .tuple(
    fc.oneof({ weight: 3, arbitrary: validShipment }, { weight: 1, arbitrary: anyShipment }),
    fc.option(fc.constantFrom('"key":"KZ",', '"unit":"KGM",', '"kx":1,'), { freq: 4 }),
    fc.nat(),
  )
  .map(([row, twice, at]) => {
    let text = JSON.stringify(row, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && 'written' in v ? `#written:${(v as { written: string }).written}#` : v,
    ).replace(/"#written:([^"#]*)#"/g, '$1');
    if (twice) {
      // Before a member of that name, if there is one: its object then holds it twice.
      const name = twice.slice(0, twice.indexOf(':'));
      const found = [...text.matchAll(new RegExp(`[{,]${name}:`, 'g'))];
      const hit = found[at % Math.max(found.length, 1)];
      if (hit) text = `${text.slice(0, hit.index! + 1)}${twice}${text.slice(hit.index! + 1)}`;
    }
    return text;
  });
const lineEnd = fc.constantFrom('\n', '\r\n', '\n\n', '\n  \n');
/** An NDJSON file of such lines (its first row keeps it one: a file that begins with [ is a JSON array). */
const file = (lines: fc.Arbitrary<string | Uint8Array>) =>
  fc
    .array(fc.tuple(lines, lineEnd), { maxLength: 6 })
    .map((parts) =>
      Buffer.concat([
        Buffer.from('{"key":"first"}\n'),
        ...parts.flatMap(([l, end]) => [Buffer.from(l), Buffer.from(end)]),
      ]),
    );
/** Valid rows with a few bytes changed, inserted or cut: near misses reach deeper than noise. */
const mutated = fc
  .tuple(
    rowText,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'cut')), {
      maxLength: 3,
    }),
  )
  .map(([t, edits]) => {
    const bytes = [...Buffer.from(t)];
    for (const [at, byte, how] of edits) {
      const i = at % (bytes.length + 1);
      if (how === 'set' && i < bytes.length) bytes[i] = byte;
      else if (how === 'insert') bytes.splice(i, 0, byte);
      else bytes.splice(i, 1);
    }
    return Uint8Array.from(bytes.filter((b) => b !== NDJSON_LINE_END));
  });

describe('the intake over arbitrary input', () => {
  it('never throws; accepts a line only with every field equal to what its bytes say, else names the line', () => {
    fc.assert(
      fc.property(
        file(
          fc.oneof(
            rowText,
            mutated,
            fc.uint8Array({ maxLength: 40 }).map((b) => b.filter((c) => c !== 0x0a)),
          ),
        ),
        fc.integer({ min: 1, max: 64 }),
        (bytes, chunk) => {
          intakeOf(bytes, chunk);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses every line whose bytes are not UTF-8, naming the line', () => {
    fc.assert(
      fc.property(file(fc.oneof(mutated, fc.uint8Array({ maxLength: 30 }))), (bytes) => {
        const lines = linesOf(bytes);
        for (const { row, verdict } of intakeOf(bytes, 5)) {
          const line = lines.find((l) => l.line === row.line)!;
          if (!isUtf8(line.bytes)) {
            expect(verdict.ok).toBe(false);
            expect(firstInvalidUtf8(line.bytes)).toBeGreaterThanOrEqual(0);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses deep nesting anywhere in a row, never overflowing the stack', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 65, max: 200_000 }),
        fc.constantFrom('[', '{"a":'),
        fc.constantFrom('legalEntityId', 'customData', 'components', 'extra'),
        fc.boolean(),
        (depth, open, field, closed) => {
          const close = open === '[' ? ']' : '}';
          const deep = `${open.repeat(depth)}1${closed ? close.repeat(depth) : ''}`;
          const line = `{"key":"D","${field}":${deep},"activityType":"IMPORT"}\n{"key":"after"}`;
          const rows = intakeOf(Buffer.from(line), 65_536);
          expect(rows).toHaveLength(2);
          expect(rows[0]!.verdict.ok).toBe(false);
          if (!rows[0]!.verdict.ok)
            expect(rows[0]!.verdict.errors[0]!.rule).toMatch(
              closed ? /^nested deeper than 64 levels/ : /^not valid JSON/,
            );
          expect(rows[1]!.row.line).toBe(2);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reads a JSON array of anything into rows, or refuses the whole file as broken: nothing else', () => {
    const item = fc.oneof(
      rowText,
      mutated.map((b) => Buffer.from(b).toString('latin1')),
      fc.json(),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 5 }), fc.constantFrom(',', ' ,\n', ''), (items, comma) => {
        const bytes = Buffer.from(`[${items.join(comma)}]`, 'latin1');
        try {
          const rows = [...shipmentRowsOf([bytes])];
          rows.forEach((row, i) => {
            expect(row.line).toBe(i + 1);
            checkFileRow(row);
          });
        } catch (error) {
          expect(error).toBeInstanceOf(FileFormatError);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('finds the first byte that is not UTF-8 exactly when Node says the bytes are not UTF-8', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (b) => {
        expect(firstInvalidUtf8(b) === -1).toBe(isUtf8(b));
      }),
      { numRuns: 3000 },
    );
  });
});
