import { describe, it, expect, afterEach } from 'vitest';
import { sql } from 'kysely';
import { startWorkerHarness, type WorkerHarness } from '../support/worker-harness.ts';

// What a service may send that Postgres cannot hold (a NUL, lone surrogates), beside what it can hold
// byte for byte however odd (COPY's own \. and \N, tabs, backslashes, RTL and zero-width marks, a BOM,
// decomposed accents, controls, a long name, odd keys): the first stored with U+FFFD and recorded with
// the value as sent, the second stored as sent; a second refresh writes nothing.
const STORABLE_NAME = [
  // A BOM that starts a value is text, not a byte-order mark: kept.
  '\ufeffstarts with a BOM',
  'tab\there',
  'line\nbreak\r\n',
  '\\.',
  '\\N',
  'back\\slash \\\\ "quoted" \'single\'',
  "'); drop table plots; --",
  '\u202eRTL\u200f\u200b\u200d',
  '\ufeffBOM',
  'Cafe\u0301',
  '\u0001\u001f\u007f',
  '😀 \ud83d\ude00',
].join(' | ');
// customData nested 60 deep, with tiny and huge numbers at the bottom.
let deep: unknown = { min: 5e-324, max: 1.7976931348623157e308, neg: -0.1 };
for (let i = 0; i < 60; i++) deep = i % 2 ? [deep] : { [`level ${i}`]: deep };
const STORABLE_DATA = {
  deep,
  '\\.': '\\N',
  'a\tb': 'c\nd',
  '': 'empty key',
  '\ufeff': ['\u200f', { '\\': '\\u0000 is text here' }],
  big: 1e308,
  tiny: 5e-324,
};

describe('values the warehouse cannot hold', () => {
  let h: WorkerHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('stores them with U+FFFD, records each with the value as sent, stores the rest byte for byte, and does not flap', async () => {
    h = await startWorkerHarness({ seed: 34, layout: { ownPlots: 3, suppliers: [{ plots: 12 }] } }, 'unstorable');
    const { control } = h.sim;
    const supplier = control.suppliers()[0]!.id;
    const [nulName, loneDescription, longName, analysed] = control.supplierPlotIds(supplier);
    // customData is sent to its owner only: the business's own plots carry it.
    const [oddKey, storable] = [...control.plots()]
      .filter((p) => p.supplierIds.length === 0)
      .map((p) => p.plot['id'] as string);
    control.editPlot(nulName!, { name: 'North\u0000field' });
    control.editPlot(oddKey!, { customData: { 'k\u0000ey': 'v', nested: { deep: [1, 'x\ud800'] } } });
    control.editPlot(loneDescription!, { description: '\udc00tail' });
    control.editPlot(storable!, { name: STORABLE_NAME, description: '\\.\n\\N\n', customData: STORABLE_DATA });
    const long = `${'ẞ'.repeat(150_000)}${'x\t'.repeat(75_000)}`;
    control.editPlot(longName!, { name: long });
    // An analysis whose type (also its key in mostRecentAnalysesByType) and status hold what Postgres cannot.
    control.addAnalysis(analysed!, { type: 'EUFOROBS\u0000', status: 'succeeded\ud800' });

    const first = await h.refresh();
    expect(first.status).toBe('succeeded');
    const issues = await sql<{
      record_id: string;
      field: string;
      rule: string;
      action: string;
      sent_value: string;
      location: string;
    }>`select record_id, field, rule, action, sent_value, location from sync_issues
        where run_id = ${first.runId}::uuid and action = 'replaced' order by record_id, field collate "C"`.execute(
      h.db,
    );
    const byRecord = (id: string) => issues.rows.filter((r) => r.record_id === id).map((r) => [r.field, r.sent_value]);
    expect(byRecord(nulName!)).toEqual([['name', '"North\\u0000field"']]);
    expect(byRecord(oddKey!)).toEqual([
      ['customData.nested.deep[1]', '"x\\ud800"'],
      ['customData["k\\u0000ey"]', '"k\\u0000ey"'],
    ]);
    expect(byRecord(loneDescription!)).toEqual([['description', '"\\udc00tail"']]);
    expect(byRecord(analysed!)).toEqual([
      ['mostRecentAnalysesByType["EUFOROBS\\u0000"]', '"EUFOROBS\\u0000"'],
      ['mostRecentAnalysesByType["EUFOROBS\\u0000"].status', '"succeeded\\ud800"'],
      ['mostRecentAnalysesByType["EUFOROBS\\u0000"].type', '"EUFOROBS\\u0000"'],
      ['mostRecentAnalysis.status', '"succeeded\\ud800"'],
      ['mostRecentAnalysis.type', '"EUFOROBS\\u0000"'],
    ]);
    expect(issues.rows).toHaveLength(9);
    for (const r of issues.rows) {
      expect(r.rule).toMatch(/stored as U\+FFFD/);
      expect(r.location).toMatch(/^page \d+ #\d+$/);
    }
    // The value as sent, recovered from the record.
    expect(JSON.parse(issues.rows.find((r) => r.record_id === nulName)!.sent_value)).toBe('North\u0000field');
    // The run counts them with whatever else it met.
    const all = await sql<{ n: number }>`
      select count(*)::int as n from sync_issues where run_id = ${first.runId}::uuid`.execute(h.db);
    expect(first.issues).toBe(all.rows[0]!.n);
    expect(first.issues).toBeGreaterThanOrEqual(9);
    expect(first.valuesReplaced).toBe(9);

    const plot = async (id: string) =>
      (
        await sql<{ name: string | null; description: string | null; custom_data: unknown; text: string | null }>`
          select name, description, custom_data, custom_data::text as text from plots where id = ${id}`.execute(h!.db)
      ).rows[0]!;
    expect((await plot(nulName!)).name).toBe('North\ufffdfield');
    expect((await plot(oddKey!)).custom_data).toEqual({ 'k\ufffdey': 'v', nested: { deep: [1, 'x\ufffd'] } });
    expect((await plot(loneDescription!)).description).toBe('\ufffdtail');
    const odd = await plot(storable!);
    expect(odd.name).toBe(STORABLE_NAME);
    expect(odd.description).toBe('\\.\n\\N\n');
    expect(odd.custom_data).toEqual(STORABLE_DATA);
    expect((await plot(longName!)).name).toBe(long);
    const analyses = await sql<{ type: string; status: string }>`
      select type, status from analyses where plot_id = ${analysed!} and is_most_recent`.execute(h.db);
    expect(analyses.rows).toEqual([{ type: 'EUFOROBS\ufffd', status: 'succeeded\ufffd' }]);
    expect(issues.rows.some((r) => r.record_id === storable || r.record_id === longName)).toBe(false);

    // Compared as sent: nothing changed at the service, so nothing is written, and nothing recorded
    // (the replacements the warehouse holds are those the first run recorded: docs/warehouse.md).
    const again = await h.refresh();
    expect(again.status).toBe('succeeded');
    expect(again.rowsWritten).toBe(0);
    expect(again.valuesReplaced).toBe(0);
    const replacedAgain = await sql<{ n: number }>`
      select count(*)::int as n from sync_issues where run_id = ${again.runId}::uuid and action = 'replaced'`.execute(
      h.db,
    );
    expect(replacedAgain.rows[0]!.n).toBe(0);

    // A plot that changes while still holding a NUL is written, and its replacement recorded again.
    control.editPlot(nulName!, { name: 'South\u0000field' });
    const third = await h.refresh();
    const recorded = await sql<{ record_id: string; field: string; sent_value: string }>`
      select record_id, field, sent_value from sync_issues
        where run_id = ${third.runId}::uuid and action = 'replaced'`.execute(h.db);
    expect(recorded.rows).toEqual([{ record_id: nulName, field: 'name', sent_value: '"South\\u0000field"' }]);
    expect((await plot(nulName!)).name).toBe('South\ufffdfield');
  });
});
