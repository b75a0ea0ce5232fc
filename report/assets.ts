import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pageScript } from './page-bundle.ts';
import type { ReportAssets } from './render.ts';

// The libraries and outlines the report inlines (and its own page script, bundled: page-bundle.ts), read from the installed packages (dependencies,
// not devDependencies: the Docker image has them). Resolved through Node's module resolution from
// this module, so they are found when the sources run through tsx and when the CLI runs bundled as
// dist/ddsync.mjs (which resolves from dist/ to the package's node_modules).
const require = createRequire(import.meta.url);

const FILES = {
  leafletJs: 'leaflet/dist/leaflet.js',
  leafletCss: 'leaflet/dist/leaflet.css',
  topojsonClientJs: 'topojson-client/dist/topojson-client.min.js',
  worldTopoJson: 'world-atlas/countries-110m.json',
} as const satisfies Record<Exclude<keyof ReportAssets, 'pageJs'>, string>;

export async function readReportAssets(): Promise<ReportAssets> {
  const [entries, pageJs] = await Promise.all([readLibraries(), pageScript()]);
  return { ...entries, pageJs };
}

async function readLibraries(): Promise<Omit<ReportAssets, 'pageJs'>> {
  const entries = await Promise.all(
    Object.entries(FILES).map(async ([key, file]) => {
      let path: string;
      try {
        path = require.resolve(file);
      } catch {
        throw new Error(`the report needs ${file} from npm: it is missing (run npm ci)`);
      }
      return [key, await readFile(path, 'utf8')] as const;
    }),
  );
  return Object.fromEntries(entries) as unknown as Omit<ReportAssets, 'pageJs'>;
}
