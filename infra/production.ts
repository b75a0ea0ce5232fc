/**
 * How a production worker runs: the built CLI (npm run build) with the prebuilt workflow bundle, and
 * V8 heap limits that keep its memory small and flat (pages are held as text and die young, so a
 * modest heap suffices; without limits V8 lets the heap grow to a share of the machine's memory).
 * The growing factor matters as much as the limit: with the default one and a 96 MB limit, V8 kept
 * the old generation's limit about 20 MB above the ~45 MB live, less than the young generation's
 * capacity, so it ran an incremental mark-compact every 100-200 ms while page bodies streamed in
 * (a third of the worker's CPU in a no-change refresh). A limit of 128 MB with a growing factor of
 * 2 leaves room: mark-compacts every second or so, a no-change refresh's worker CPU down by 40 %,
 * peak RSS at a million plots 244 MB (docs/benchmarks.md, "The worker's garbage collection").
 * The limit is where V8 ends the process with a fatal error, not a size it aims for: at 128 MB a
 * refresh of plots drawn with 1,000 vertices (pages of 12 MB) died parsing a page. At 1024 MB with a
 * growing factor of 1.75 the heap follows what lives (about 1.75 times it after each mark-compact):
 * ordinary refreshes peak 10-20 MB above the 128 MB setting, detailed plots are read (docs/benchmarks.md,
 * "Plots drawn in detail").
 * Since pages above 4 MB are split and written plot by plot and page bodies are bounded by bytes
 * (docs/refresh.md, "A page of any size"), no page needs a large heap any more: the worker's heap holds
 * at most a part of 2 MB of plots, or one plot of at most 16 MB, beside what it always holds. The
 * limit has not been lowered yet: a lower one changes how often V8 collects for ordinary refreshes too,
 * and one set of flags (issue 36) must be measured at a million ordinary plots as well as at 5,000
 * vertices (docs/benchmarks.md, "A page of any size in bounded memory", has the first figures).
 * The Dockerfile repeats these settings (test/unit/infra/production.test.ts keeps them equal).
 */
export const WORKER_NODE_FLAGS = [
  '--max-old-space-size=1024',
  '--heap-growing-percent=75',
  '--max-semi-space-size=8',
] as const;
/**
 * glibc malloc: fewer arenas (the worker's many native threads otherwise each grow their own, ~30 MB),
 * and a fixed mmap threshold, so a freed buffer of a page (about a megabyte) goes back to the system
 * at once (by default the threshold rises after such a free and later ones stay in the heap): about
 * 20 MB less RSS, measured with bench:refresh.
 */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } as const;
/**
 * The workflow thread's young generation (semi-space, MB). A worker thread inherits the process's
 * --max-semi-space-size, sized for the activities' page bodies; the workflow code's garbage is small
 * (activations, commands), yet at 8 its young generation grew to 14 MB of RSS during a refresh.
 */
export const WORKFLOW_THREAD_SEMI_SPACE_MB = 1;
export const BUILT_CLI = 'dist/ddsync.mjs';
export const BUILT_WORKFLOW_BUNDLE = 'dist/workflow-bundle.cjs';
