/**
 * How a production worker runs: the built CLI (npm run build) with the prebuilt workflow bundle, and
 * V8 heap limits that keep its memory small and flat (pages are held as text and die young, so a
 * modest heap suffices; without limits V8 lets the heap grow to a share of the machine's memory).
 * The Dockerfile repeats these settings (test/unit/infra/production.test.ts keeps them equal).
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=96', '--max-semi-space-size=8'] as const;
/** Fewer glibc malloc arenas: the worker's many native threads otherwise each grow their own (~30 MB). */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;
export const BUILT_CLI = 'dist/ddsync.mjs';
export const BUILT_WORKFLOW_BUNDLE = 'dist/workflow-bundle.js';
