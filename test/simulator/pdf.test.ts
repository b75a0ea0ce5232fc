import { describe, expect, it } from 'vitest';
import { renderPdf } from '../../simulator/pdf.ts';
import { pdfStructureProblems, readPdf } from '../support/pdf-reader.ts';

/** `pdf` with `from` replaced by `to` (the simulator's PDFs are Latin-1 text). */
function altered(pdf: Buffer, from: string | RegExp, to: (match: string) => string): Buffer {
  const text = pdf.toString('latin1');
  const changed = text.replace(from, to);
  expect(changed, `${from} not found`).not.toBe(text);
  return Buffer.from(changed, 'latin1');
}

describe('the simulator renders PDFs a real reader opens without a complaint', () => {
  const pdf = renderPdf('Survey response', ["Survey response 4c1f (Côte d'Ivoire)", 'Status: COMPLETED \\ done']);

  it('one page, its text as written, no repair and no structure problem', async () => {
    expect(pdfStructureProblems(pdf)).toEqual([]);
    const read = await readPdf(pdf);
    expect(read.complaints).toEqual([]);
    expect(read.pages).toBe(1);
    expect(read.firstPageText).toContain("Survey response 4c1f (Co?te d'Ivoire)");
    expect(read.firstPageText).toContain('Status: COMPLETED \\ done');
  });

  // The checks above would pass a broken file if they could not see one: each breakage is caught.
  it('catches a moved startxref, a wrong object offset, a wrong stream length and an unknown operator', async () => {
    const startxref = altered(pdf, /startxref\n(\d+)/, (m) => `startxref\n${Number(m.slice(10)) - 7}`);
    expect(pdfStructureProblems(startxref)).toEqual([
      expect.stringMatching(/^startxref \d+ does not point at an xref table$/),
    ]);
    expect((await readPdf(startxref)).complaints).toContain('Warning: Indexing all PDF objects');

    const firstOffset = /\n(\d{10}) 00000 n/.exec(pdf.toString('latin1'))![1]!;
    const offset = altered(
      pdf,
      `${firstOffset} 00000 n`,
      () => `${String(Number(firstOffset) + 3).padStart(10, '0')} 00000 n`,
    );
    expect(pdfStructureProblems(offset)).toEqual([
      expect.stringMatching(/^xref entry of object 1 points at \d+, not at the object$/),
    ]);
    expect((await readPdf(offset)).complaints).toContain('Warning: Indexing all PDF objects');

    const length = altered(pdf, /\/Length (\d+)/, (m) => `/Length ${Number(m.slice(8)) + 5}`);
    expect(pdfStructureProblems(length)).toEqual([
      expect.stringMatching(/^stream at \d+: \/Length \d+ does not end at endstream$/),
    ]);

    const operator = altered(pdf, ') Tj ET', () => ') Qx ET');
    expect(pdfStructureProblems(operator)).toEqual([]);
    expect((await readPdf(operator)).complaints).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Warning: Unknown command "x"/)]),
    );
  });
});
