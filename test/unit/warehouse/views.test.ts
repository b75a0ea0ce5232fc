import { describe, it, expect } from 'vitest';
import {
  codeOf,
  inDependencyOrder,
  readViewFiles,
  viewFiles,
  viewsToRecreate,
  type ViewFile,
} from '../../../warehouse/views.ts';

const view = (name: string, body: string) => ({ file: `${name}.sql`, text: `create view ${name} as ${body};\n` });

describe('the view files (sql/views)', () => {
  it('each create the view they are named after, with its comments and the reader role’s grant', async () => {
    const files = await readViewFiles();
    expect(files.length).toBeGreaterThanOrEqual(17);
    for (const f of files) {
      expect(f.text).toMatch(new RegExp(`^create view ${f.name} as$`, 'm'));
      expect(f.text).toMatch(new RegExp(`^comment on view ${f.name} is '`, 'm'));
      expect(f.text).toMatch(new RegExp(`^grant select on ${f.name} to ddsync_reader;$`, 'm'));
      expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // Created after what they read.
    const order = inDependencyOrder(files).map((f) => f.name);
    for (const f of files) for (const used of f.uses) expect(order.indexOf(used)).toBeLessThan(order.indexOf(f.name));
  });

  it('find what a view uses in its SQL, not in its comments or text', () => {
    expect(codeOf("select 'bi_a' as x -- bi_b\n/* bi_c */ from t")).not.toMatch(/bi_/);
    const [a, b, c] = viewFiles([
      view('bi_a', 'select 1 as one'),
      {
        file: 'bi_b.sql',
        text: "-- unlike bi_c\ncreate view bi_b as select * from bi_a;\ncomment on view bi_b is 'See bi_c.';\n",
      },
      view('bi_c', 'select x.one from bi_b x join "bi_a" y using (one)'),
    ]);
    expect([a!.uses, b!.uses, c!.uses]).toEqual([[], ['bi_a'], ['bi_a', 'bi_b']]);
    expect(inDependencyOrder([c!, b!, a!]).map((f) => f.name)).toEqual(['bi_a', 'bi_b', 'bi_c']);
  });

  it('are hashed with their line endings as \\n', () => {
    const [lf] = viewFiles([{ file: 'bi_a.sql', text: 'create view bi_a as\nselect 1;\n' }]);
    const [crlf] = viewFiles([{ file: 'bi_a.sql', text: 'create view bi_a as\r\nselect 1;\r\n' }]);
    const [other] = viewFiles([{ file: 'bi_a.sql', text: 'create view bi_a as\nselect 2;\n' }]);
    expect(crlf!.sha256).toBe(lf!.sha256);
    expect(crlf!.text).toBe(lf!.text);
    expect(other!.sha256).not.toBe(lf!.sha256);
  });

  it('refuse a file that creates another view, none, or two; a bad name; a circle', () => {
    expect(() =>
      viewFiles([view('bi_a', 'select 1'), { file: 'bi_b.sql', text: 'create view bi_x as select 1;' }]),
    ).toThrow('sql/views/bi_b.sql must create the view bi_b and no other (create view bi_b as …); it creates bi_x');
    expect(() => viewFiles([{ file: 'bi_b.sql', text: "comment on view bi_b is 'x';" }])).toThrow(/it creates none$/);
    expect(() =>
      viewFiles([{ file: 'bi_b.sql', text: 'create view bi_b as select 1; create view bi_b2 as select 2;' }]),
    ).toThrow(/it creates bi_b, bi_b2$/);
    expect(() => viewFiles([{ file: 'Bi-B.sql', text: 'create view x as select 1;' }])).toThrow(
      'sql/views/Bi-B.sql: a view file is named <view>.sql, in lower case (a-z, 0-9, _)',
    );
    const circle = viewFiles([
      view('bi_a', 'select * from bi_c'),
      view('bi_b', 'select * from bi_a'),
      view('bi_c', 'select * from bi_b'),
    ]);
    expect(() => inDependencyOrder(circle)).toThrow(
      'the views in sql/views use each other in a circle: bi_a → bi_c → bi_b → bi_a',
    );
  });
});

describe('the views to make again', () => {
  const files: ViewFile[] = viewFiles([
    view('base', 'select 1 as one'),
    view('middle', 'select * from base'),
    view('top', 'select * from middle'),
    view('apart', 'select 2 as two'),
  ]);
  const recordedAll = new Map(files.map((f) => [f.name, f.sha256]));
  const presentAll = new Set(files.map((f) => f.name));

  it('are none when every file is as recorded and every view is there', () => {
    expect(viewsToRecreate(files, recordedAll, presentAll, [])).toEqual(new Set());
  });

  it('are a changed view and every view that uses it, directly or not', () => {
    const recorded = new Map([...recordedAll, ['base', 'an older file']]);
    expect(viewsToRecreate(files, recorded, presentAll, [])).toEqual(new Set(['base', 'middle', 'top']));
    const changedTop = new Map([...recordedAll, ['top', 'an older file']]);
    expect(viewsToRecreate(files, changedTop, presentAll, [])).toEqual(new Set(['top']));
  });

  it('are a missing or never recorded view with its users', () => {
    expect(viewsToRecreate(files, recordedAll, new Set(['apart', 'middle', 'top']), [])).toEqual(
      new Set(['base', 'middle', 'top']),
    );
    expect(viewsToRecreate(files, new Map(), new Set(), []).size).toBe(4);
  });

  it('follow the warehouse too: a view that uses a changed one there is made again, as is one that used a view now gone', () => {
    const recorded = new Map([...recordedAll, ['apart', 'an older file'], ['retired', 'x']]);
    expect(
      viewsToRecreate(files, recorded, new Set([...presentAll, 'retired']), [
        { view: 'top', uses: 'apart' },
        { view: 'middle', uses: 'retired' },
      ]),
    ).toEqual(new Set(['apart', 'top', 'middle']));
  });
});
