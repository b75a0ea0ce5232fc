#!/usr/bin/env node
// The `ddsync` command. From a source checkout (cli/main.ts beside this folder) it runs the TypeScript
// sources through tsx, so a clone needs no build step and never runs a stale build. An installed package
// ships no sources (package.json "files"): it runs the compiled JavaScript `npm pack` built
// (dist/ddsync.mjs), with no TypeScript loader in the process. The image runs the package the same way.
import { existsSync } from 'node:fs';

const sources = new URL('../cli/main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import('../dist/ddsync.mjs');
}
