import { describe, it, expect } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LAYERS,
  circles,
  importsOf,
  ioImports,
  layerViolations,
  sourceFiles,
  sqlImports,
  type ImportEdge,
} from '../../support/import-graph.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('the house: layers that point one way', () => {
  const files = sourceFiles(ROOT, LAYERS);
  const edges = files.flatMap((f) => importsOf(ROOT, f));

  it('reads the imports of every source folder, and each import names a file that exists', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(edges.length).toBeGreaterThan(400);
    expect(edges.filter((e) => !existsSync(`${ROOT}/${e.to}`)).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('has no import against the order tools → cli → infra → workflows → activities → upstream | warehouse → domain → schema → platform', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('keeps the domain layer pure: its rules import no package that does I/O, and nothing above schema', () => {
    const domain = files.filter((f) => f.startsWith('domain/'));
    expect(domain.length).toBeGreaterThan(20);
    expect(domain.flatMap((f) => ioImports(ROOT, f))).toEqual([]);
    expect(edges.filter((e) => e.from.startsWith('domain/') && !/^(domain|schema|platform)\//.test(e.to))).toEqual([]);
  });

  it('would notice a domain rule reading a file or a database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      mkdirSync(join(dir, 'domain'));
      writeFileSync(
        join(dir, 'domain/rule.ts'),
        "import { readFileSync } from 'node:fs';\nimport type { Kysely } from 'kysely';\nimport area from '@turf/area';\nconst pg = await import('pg');\n",
      );
      expect(ioImports(dir, 'domain/rule.ts')).toEqual([
        'domain/rule.ts -> node:fs',
        'domain/rule.ts -> kysely',
        'domain/rule.ts -> pg',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps every SQL statement in warehouse/: no other layer imports kysely or pg but for types', () => {
    expect(files.flatMap((f) => sqlImports(ROOT, f))).toEqual([]);
  });

  it('would notice SQL written outside warehouse/, and allow a type-only import of kysely', () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      mkdirSync(join(dir, 'activities'));
      mkdirSync(join(dir, 'warehouse'));
      writeFileSync(
        join(dir, 'activities/step.ts'),
        [
          "import { sql } from 'kysely';",
          "import type { Kysely } from 'kysely';",
          "import { type ColumnType, type Selectable } from 'kysely';",
          "import { Kysely as K, type Sql } from 'kysely';",
          "export type { Insertable } from 'kysely';",
          "export { sql as q } from 'kysely';",
          "import pg from 'pg';",
          "const copy = await import('pg-copy-streams');",
          "import { z } from 'zod';",
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'warehouse/ledger.ts'), "import { sql } from 'kysely';\nimport pg from 'pg';\n");
      // A statement of the warehouse's own, moved back to the CLI where it once was.
      mkdirSync(join(dir, 'cli'));
      copyFileSync(join(ROOT, 'warehouse/submission/batch-runs.ts'), join(dir, 'cli/submission-retry.ts'));
      expect(sqlImports(dir, 'activities/step.ts')).toEqual([
        'activities/step.ts -> kysely',
        'activities/step.ts -> kysely',
        'activities/step.ts -> kysely',
        'activities/step.ts -> pg',
        'activities/step.ts -> pg-copy-streams',
      ]);
      expect(sqlImports(dir, 'warehouse/ledger.ts')).toEqual([]);
      expect(sqlImports(dir, 'cli/submission-retry.ts')).toEqual(['cli/submission-retry.ts -> kysely']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has no import circles', () => {
    expect(circles(edges)).toEqual([]);
  });

  it('keeps the report between the CLI and the warehouse: it reads warehouse, schema and platform; only the CLI imports it', () => {
    const edge = (from: string, to: string): ImportEdge => ({ from, to, typeOnly: false });
    expect(
      layerViolations([
        edge('cli/commands/report.ts', 'report/write.ts'),
        edge('report/write.ts', 'warehouse/report/read-report.ts'),
        edge('report/assets.ts', 'platform/package-root.ts'),
        edge('report/model.ts', 'schema/database.ts'),
        edge('report/write.ts', 'infra/warehouse-connection.ts'),
        edge('report/write.ts', 'activities/a.ts'),
        edge('infra/worker.ts', 'report/write.ts'),
        edge('warehouse/w.ts', 'report/model.ts'),
      ]),
    ).toEqual([
      'report/write.ts -> infra/warehouse-connection.ts',
      'report/write.ts -> activities/a.ts',
      'infra/worker.ts -> report/write.ts',
      'warehouse/w.ts -> report/model.ts',
    ]);
  });

  it('keeps the developer tooling above the product: tools/ may import any of it, nothing of it imports tools/', () => {
    const edge = (from: string, to: string): ImportEdge => ({ from, to, typeOnly: false });
    expect(
      layerViolations([
        edge('tools/build.ts', 'infra/worker.ts'),
        edge('tools/build.ts', 'cli/main.ts'),
        edge('tools/write-table-types.ts', 'warehouse/migrate.ts'),
        edge('tools/release-migrations.ts', 'platform/package-root.ts'),
        edge('tools/t.ts', 'simulator/s.ts'),
        edge('tools/t.ts', 'report/write.ts'),
        edge('tools/t.ts', 'test/support/stack.ts'),
        edge('cli/main.ts', 'tools/build.ts'),
        edge('infra/worker.ts', 'tools/table-types.ts'),
        edge('schema/database.ts', 'tools/table-types.ts'),
      ]),
    ).toEqual([
      'tools/t.ts -> test/support/stack.ts',
      'cli/main.ts -> tools/build.ts',
      'infra/worker.ts -> tools/table-types.ts',
      'schema/database.ts -> tools/table-types.ts',
    ]);
    // The build, table-type and release scripts live there, and the layers test reads their imports.
    expect(files.filter((f) => f.startsWith('tools/'))).toEqual(
      expect.arrayContaining([
        'tools/build.ts',
        'tools/release-migrations.ts',
        'tools/table-types.ts',
        'tools/write-table-types.ts',
      ]),
    );
    expect(files.filter((f) => f.startsWith('infra/') && /build|table-types|release/.test(f))).toEqual([]);
  });

  it('would notice an upward import, a workflow importing an activity, siblings importing each other, a circle', () => {
    const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });
    expect(
      layerViolations([
        edge('schema/a.ts', 'upstream/b.ts'),
        edge('workflows/w.ts', 'activities/x.ts'),
        edge('workflows/w.ts', 'activities/x.ts', true),
        edge('warehouse/w.ts', 'upstream/u.ts', true),
        edge('simulator/s.ts', 'upstream/u.ts'),
        edge('activities/a.ts', 'warehouse/w.ts'),
      ]),
    ).toEqual([
      'schema/a.ts -> upstream/b.ts',
      'workflows/w.ts -> activities/x.ts',
      'warehouse/w.ts -> upstream/u.ts (type only)',
      'simulator/s.ts -> upstream/u.ts',
    ]);
    expect(circles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts'), edge('c.ts', 'd.ts')])).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
    ]);
  });
});
