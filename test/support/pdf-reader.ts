import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** What a real reader, Mozilla's pdf.js, makes of a PDF. */
export interface PdfReading {
  pages: number;
  /** The text of the first page, its pieces joined by spaces. */
  firstPageText: string;
  /**
   * What pdf.js said while reading: it repairs a broken file silently but for a warning ("Indexing all
   * PDF objects" after a bad xref, "Unknown command" in a page): empty for a sound file, like poppler's stderr.
   */
  complaints: string[];
}

// pdf.js in Node reads the 14 standard fonts (the simulator's Helvetica) from files, not from a URL.
const STANDARD_FONTS = join(
  dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')),
  'standard_fonts/',
);

/** Opens `bytes` with pdf.js and reads its first page completely (text and drawing operators; no canvas). */
export async function readPdf(bytes: Uint8Array): Promise<PdfReading> {
  const complaints: string[] = [];
  const saved = { log: console.log, warn: console.warn, error: console.error };
  // pdf.js has no hook for its warnings: in Node its worker runs in this thread and prints them to the console.
  for (const method of ['log', 'warn', 'error'] as const)
    console[method] = (...args: unknown[]) => {
      complaints.push(args.join(' '));
    };
  try {
    const doc = await getDocument({
      data: new Uint8Array(bytes),
      verbosity: VerbosityLevel.WARNINGS,
      standardFontDataUrl: STANDARD_FONTS,
      isEvalSupported: false,
    }).promise;
    try {
      const page = await doc.getPage(1);
      const text = await page.getTextContent();
      await page.getOperatorList(); // parses the whole content stream and its font, as rendering would
      const firstPageText = text.items.map((item) => ('str' in item ? item.str : '')).join(' ');
      return { pages: doc.numPages, firstPageText, complaints };
    } finally {
      await doc.destroy();
    }
  } finally {
    Object.assign(console, saved);
  }
}

/**
 * Structure problems pdf.js forgives without a word but poppler reports: the `startxref` offset, each
 * xref entry's offset, each stream's direct `/Length`. Empty for a sound file with a classic xref table.
 */
export function pdfStructureProblems(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes).toString('latin1');
  const problems: string[] = [];
  if (!text.startsWith('%PDF-')) problems.push('no %PDF- header');
  if (!text.trimEnd().endsWith('%%EOF')) problems.push('no %%EOF at the end');
  const xrefAt = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1] ?? -1);
  if (text.slice(xrefAt, xrefAt + 4) !== 'xref')
    return [...problems, `startxref ${xrefAt} does not point at an xref table`];
  const table = /^xref\s+((?:\d+ \d+\s+(?:\d{10} \d{5} [nf]\s+)*)+)trailer/.exec(text.slice(xrefAt))?.[1] ?? '';
  if (!table) problems.push('unreadable xref table');
  for (const section of table.matchAll(/(\d+) \d+\s+((?:\d{10} \d{5} [nf]\s+)*)/g)) {
    [...section[2]!.matchAll(/(\d{10}) (\d{5}) ([nf])/g)].forEach(([, offset, generation, kind], i) => {
      const number = Number(section[1]) + i;
      if (kind === 'n' && !text.startsWith(`${number} ${Number(generation)} obj`, Number(offset)))
        problems.push(`xref entry of object ${number} points at ${Number(offset)}, not at the object`);
    });
  }
  for (const stream of text.matchAll(/\/Length (\d+)\b(?! \d+ R)[\s\S]*?>>\s*stream\r?\n/g)) {
    const end = stream.index + stream[0].length + Number(stream[1]);
    if (!/^\r?\nendstream/.test(text.slice(end, end + 12)))
      problems.push(`stream at ${stream.index}: /Length ${stream[1]} does not end at endstream`);
  }
  return problems;
}
