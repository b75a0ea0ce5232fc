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
 * at most a part of 2 MB of plots, or one plot of at most 16 MB, beside what it always holds. So the
 * limit is 192 MB, with the growing factor of 1.75 and semi-spaces of 4 MB (issue 36, measured
 * 2026-11-28, docs/benchmarks.md "One set of flags"): ordinary refreshes peak at 242 MB (20,000 plots),
 * 248 MB (100,000) and 250 MB (1,000,000), against 252-260 MB at 1024 MB and 268-269 MB at 256 MB with factor 2 (V8 grows
 * to a limit it is given, so a higher one costs RSS); pages of 5,000-vertex plots at 239 MB; a plot of
 * 15 MB (600,000 positions) parses and is written, peaking at 306 MB (375 MB at 1024). Semi-spaces of
 * 4 MB rather than 8 took 2-10 MB off the peaks for no worker CPU measurable on this machine.
 * The Dockerfile repeats these settings (test/unit/infra/production.test.ts keeps them equal).
 */
export const WORKER_NODE_FLAGS = [
  '--max-old-space-size=192',
  '--heap-growing-percent=75',
  '--max-semi-space-size=4',
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
