/**
 * How a production worker runs: the built CLI (npm run build) with the prebuilt workflow bundle, and
 * V8 heap limits that keep its memory small and flat (pages are held as text and die young, so a
 * modest heap suffices; without limits V8 lets the heap grow to a share of the machine's memory).
 * The Dockerfile repeats these settings (test/unit/infra/production.test.ts keeps them equal).
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=96', '--max-semi-space-size=8'] as const;
/**
 * glibc malloc: fewer arenas (the worker's many native threads otherwise each grow their own, ~30 MB),
 * and a fixed mmap threshold, so a freed buffer of a page (about a megabyte) goes back to the system
 * at once (by default the threshold rises after such a free and later ones stay in the heap): about
 * 20 MB less RSS, measured with bench:refresh.
 */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } as const;
export const BUILT_CLI = 'dist/ddsync.mjs';
export const BUILT_WORKFLOW_BUNDLE = 'dist/workflow-bundle.js';
