import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { packagePath } from '../platform/package-root.ts';

// The page's script is TypeScript (report/page/main.ts and what it imports, type-checked with the
// DOM's types by report/page/tsconfig.json), bundled by esbuild into one classic script the report
// inlines. From a source checkout it is bundled when a report is first written (a few tens of
// milliseconds, once per process), so it is never stale; an installed package has no TypeScript
// sources and reads the script `npm run build` bundled the same way (dist/report-page.js).

/** The page's entry point, found through the package folder from the sources and from dist/. */
export const PAGE_ENTRY = packagePath('report', 'page', 'main.ts');
/** The page script as built (tools/build.ts), for a package without the sources. */
export const BUILT_PAGE_SCRIPT = packagePath('dist', 'report-page.js');

let bundled: Promise<string> | undefined;

/** The page script as one browser script (an IIFE, ES2022), bundled once per process. */
export function pageScript(): Promise<string> {
  bundled ??= (existsSync(PAGE_ENTRY) ? bundlePageScript() : readFile(BUILT_PAGE_SCRIPT, 'utf8')).catch(
    (error: unknown) => {
      bundled = undefined;
      throw error;
    },
  );
  return bundled;
}

/** The page's sources bundled now (esbuild is a development dependency: imported only here). */
export async function bundlePageScript(): Promise<string> {
  const { build } = await import('esbuild');
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
