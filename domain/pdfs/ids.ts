/**
 * Survey-response ids as `ddsync pdfs add` accepts them: UUIDs (the contract's path parameter
 * `id` is "string, UUID"), stored in lower case so the same id in another case is the same entry.
 * Pure.
 */

export const SURVEY_RESPONSE_ID_RULE =
  'a UUID: 8-4-4-4-12 hexadecimal digits, e.g. 3f2b8c1e-9a4d-4c7e-8b21-5d6f0a9e1c34';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InvalidId {
  /** 1-based line of the file, or position among the arguments. */
  line: number;
  text: string;
  error: string;
}

export interface IdList {
  /** Valid ids in lower case, first occurrence order, without repeats. */
  ids: string[];
  invalid: InvalidId[];
  /** Valid ids given more than once (counted once). */
  repeated: number;
}

/** The id in lower case, or the reason it is not one (naming the id and the rule). */
export function checkSurveyResponseId(text: string): { id: string } | { error: string } {
  if (UUID.test(text)) return { id: text.toLowerCase() };
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return { error: `"${shown}" is not a survey response id: expected ${SURVEY_RESPONSE_ID_RULE}` };
}

/** Collects ids one at a time (arguments, or the lines of a file). */
export class IdCollector {
  readonly #seen = new Set<string>();
  readonly #result: IdList = { ids: [], invalid: [], repeated: 0 };

  /** A line of a file: a `#` starts a comment (whole line or after the id); blanks trimmed; empty lines ignored. */
  addLine(raw: string, line: number): void {
    const text = raw
      .replace(/^\uFEFF/, '')
      .replace(/#.*$/, '')
      .trim();
    if (text === '') return;
    this.add(text, line);
  }

  add(text: string, line: number): void {
    const checked = checkSurveyResponseId(text);
    if ('error' in checked) {
      this.#result.invalid.push({ line, text, error: checked.error });
      return;
    }
    if (this.#seen.has(checked.id)) {
      this.#result.repeated++;
      return;
    }
    this.#seen.add(checked.id);
    this.#result.ids.push(checked.id);
  }

  result(): IdList {
    return this.#result;
  }
}

/** The ids of a text with one per line (blank lines and `#` comments ignored). */
export function parseIdLines(text: string): IdList {
  const collector = new IdCollector();
  for (const [i, line] of text.split(/\r?\n/).entries()) collector.addLine(line, i + 1);
  return collector.result();
}
