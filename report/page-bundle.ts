import { build } from 'esbuild';
import { packagePath } from '../platform/package-root.ts';

// The page's script is TypeScript (report/page/main.ts and what it imports, type-checked with the
// DOM's types by report/page/tsconfig.json), bundled by esbuild into one classic script the report
// inlines. Bundled when a report is first written, not at build time: the same code path from a
// source checkout (bin/ddsync.js through tsx) and from the built CLI (dist/ddsync.mjs), which both
// find report/page/ under the package folder (the image copies the sources). It takes a few tens of
// milliseconds, once per process: the result is kept for the next report (the demo writes one per run).

/** The page's entry point, found through the package folder from the sources and from dist/. */
export const PAGE_ENTRY = packagePath('report', 'page', 'main.ts');

let bundled: Promise<string> | undefined;

/** The page script as one browser script (an IIFE, ES2022), bundled once per process. */
export function pageScript(): Promise<string> {
  bundled ??= bundlePageScript().catch((error: unknown) => {
    bundled = undefined;
    throw error;
  });
  return bundled;
}

async function bundlePageScript(): Promise<string> {
  let result: Awaited<ReturnType<typeof build>>;
  try {
    result = await build({
      entryPoints: [PAGE_ENTRY],
      // Paths in the bundle's comments relative to the page's folder, whatever the current folder.
      absWorkingDir: packagePath('report', 'page'),
      tsconfig: packagePath('report', 'page', 'tsconfig.json'),
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      charset: 'utf8',
      legalComments: 'none',
      logLevel: 'silent',
    });
  } catch (error) {
    throw new Error(`the report's page script (${PAGE_ENTRY}) could not be bundled: ${(error as Error).message}`);
  }
  const [file] = result.outputFiles ?? [];
  if (!file) throw new Error(`the report's page script (${PAGE_ENTRY}) bundled to nothing`);
  return file.text;
}
