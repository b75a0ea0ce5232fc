import { describe, it, expect } from 'vitest';
import { PAGE_ENTRY, pageScript } from '../../../report/page-bundle.ts';

// The page's TypeScript bundled by esbuild into the one classic script the report inlines (the
// browser test runs it: test/postgis/report-browser.test.ts).
describe("the report page's script", () => {
  it('bundles report/page/ into one classic script: strict, no module syntax left, nothing to fetch, no local paths', async () => {
    const js = await pageScript();
    expect(PAGE_ENTRY.endsWith('report/page/main.ts')).toBe(true);
    expect(js.startsWith('"use strict";\n(() => {')).toBe(true);
    expect(js.trimEnd().endsWith('})();')).toBe(true);
    expect(js).not.toMatch(/^\s*(import|export)\s/m);
    expect(js).not.toMatch(/\bimport\(|\brequire\(/);
    // Its modules and the values shared with the renderer are in it, types gone.
    for (const text of ['window.ddsyncReport = report', 'click to zoom in', '#fdae61', 'not ready'])
      expect(js).toContain(text);
    expect(js).not.toMatch(/\binterface\s+\w+\s*\{/);
    expect(js).not.toContain(process.cwd());
    expect(js).not.toMatch(/<\/script|<!--/i);
  });

  it('is bundled once per process: the next report takes the same text', async () => {
    expect(pageScript()).toBe(pageScript());
    expect(await pageScript()).toBe(await pageScript());
  });
});
