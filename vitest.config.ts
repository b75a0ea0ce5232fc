import { defineConfig } from 'vitest/config';

/** Options every project shares (a project does not inherit the root's test options). */
const shared = {
  // Native modules (Temporal's core, embedded Postgres) and worker threads do not mix well.
  pool: 'forks',
} as const;

/** The unit project's files; the postgis project's are POSTGIS; every other test file is the integration project's (test/unit/house/projects.test.ts). */
export const UNIT = [
  'test/unit/**/*.test.ts',
  'test/simulator/**/*.test.ts',
  'test/contract/**/*.test.ts',
  // A CLI test that needs only the simulator: ddsync child processes, no stack.
  'test/cli/invitations.test.ts',
];

/**
 * The extra suite's files (`npm run test:postgis`): PostGIS and a headless browser, which a fresh
 * machine lacks, so `npm test` (the unit and integration projects only, see package.json) never runs them.
 */
export const POSTGIS = ['test/postgis/**/*.test.ts'];

export default defineConfig({
  test: {
    // Every run's scratch space, whichever projects run (test/support/scratch-setup.ts).
    globalSetup: ['test/support/scratch-setup.ts'],
    // Two cores: integration files each start Workers; running two files at once is the most this machine takes.
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          // Pure logic, the simulator and the contract over in-process HTTP, child processes that start
          // nothing else: no Postgres, no Temporal (embeddedStack() throws here). `npm run test:unit`.
          name: 'unit',
          include: UNIT,
          // One module graph per worker, not one per file: half the CPU. So these tests stub no globals
          // and mock no modules (test/unit/house/projects.test.ts checks); they pass in any file order.
          isolate: false,
          // Room for a loaded machine; a test left waiting on a connection still fails soon.
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          ...shared,
          // Everything that needs the embedded stack: one Postgres and one Temporal dev server for the
          // run, started only when files of this project run (test/support/stack-setup.ts).
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/cli/**/*.test.ts'],
          exclude: UNIT,
          globalSetup: ['test/support/stack-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          ...shared,
          // The spatial path on a real PostGIS (a PostgreSQL 15 cluster from Debian's binaries) and the
          // report in a real headless Chromium; the same Temporal dev server as the integration project
          // (test/support/postgis-setup.ts). Fails loudly, naming the package, when either is missing.
          name: 'postgis',
          include: POSTGIS,
          globalSetup: ['test/support/postgis-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
