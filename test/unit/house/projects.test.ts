import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import config from '../../../vitest.config.ts';
import { embeddedStack } from '../../support/stack.ts';
import { scratchDir } from '../../support/scratch.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** vitest's globs as used in vitest.config.ts: `**` any folders, `*` within one name. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '\u0000')
      .replace(/\*/g, '[^/]*')
      .replace(/\u0000/g, '(?:.*/)?')}$`,
  );

function testFiles(dir = 'test'): string[] {
  return readdirSync(`${ROOT}/${dir}`, { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return testFiles(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the test projects', () => {
  const projects = (config.test?.projects ?? []) as Array<{
    test: { name: string; include: string[]; exclude?: string[] };
  }>;
  const projectsOf = (file: string) =>
    projects
      .filter(
        ({ test }) =>
          test.include.some((p) => glob(p).test(file)) && !(test.exclude ?? []).some((p) => glob(p).test(file)),
      )
      .map(({ test }) => test.name);

  it('puts every test file in exactly one project, so none is run twice or never', () => {
    expect(projects.map((p) => p.test.name)).toEqual(['unit', 'integration', 'postgis']);
    const files = testFiles();
    expect(files.length).toBeGreaterThan(70);
    expect(
      files.filter((f) => projectsOf(f).length !== 1).map((f) => `${f}: ${projectsOf(f).join(', ') || 'none'}`),
    ).toEqual([]);
    expect(projectsOf('test/unit/house/projects.test.ts')).toEqual(['unit']);
    expect(projectsOf('test/integration/refresh.test.ts')).toEqual(['integration']);
    expect(projectsOf('test/cli/demo.test.ts')).toEqual(['integration']);
    expect(projectsOf('test/cli/invitations.test.ts')).toEqual(['unit']);
    expect(projectsOf('test/postgis/spatial.test.ts')).toEqual(['postgis']);
    expect(projectsOf('test/elsewhere/new.test.ts')).toEqual([]);
  });

  // PostGIS and a browser are not on a fresh machine: the README's `npm test` runs without them.
  it('keeps the extra suite out of npm test and runs it with npm run test:postgis', () => {
    const { scripts } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> };
    expect(scripts['test']).toBe('vitest run --project unit --project integration');
    expect(scripts['test:postgis']).toBe('vitest run --project postgis');
  });

  // The unit project shares modules between its files (isolate: false): a stubbed global or a mocked
  // module would leak into the files after it.
  it('keeps the unit project free of stubbed globals and mocked modules', () => {
    const shared = /\bvi\.(mock|doMock|stubGlobal|stubEnv|useFakeTimers)\(/;
    const unit = testFiles().filter((f) => projectsOf(f)[0] === 'unit');
    expect(unit.length).toBeGreaterThan(40);
    expect(unit.filter((f) => shared.test(readFileSync(`${ROOT}/${f}`, 'utf8')))).toEqual([]);
    // Spelt apart, so this file does not match itself.
    expect(shared.test(['vi', "mock('../x.ts')"].join('.'))).toBe(true);
  });

  it('gives the unit project no Postgres and no Temporal: a test reaching for them fails by name', () => {
    expect(() => embeddedStack()).toThrow(
      /needs the embedded stack \(Postgres, Temporal\), which only the integration project starts/,
    );
  });

  it("gives the unit project the run's scratch space all the same", () => {
    expect(scratchDir('projects')).toMatch(/\/\.ddsync\/test\/run-[^/]+\/scratch\/projects-[^/]+$/);
  });
});
