// What every end-to-end benchmark stands on: the embedded Postgres, a Temporal dev server, the
// simulator in its own process, a production build of the worker, and orderly teardown.
import { spawnSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startEmbeddedPostgres, type RunningPostgres } from '../../infra/embedded-postgres.ts';
import { startTemporalDevServer, type RunningDevServer } from '../../infra/temporal-dev-server.ts';
import { packagePath } from '../../platform/package-root.ts';
import { spawnChild, type Child } from './children.ts';
import { UsageError } from '../../cli/usage.ts';

const DDSYNC_BIN = packagePath('bin', 'ddsync.js');
const BENCH_DIR = packagePath('.ddsync', 'bench');

/** Stops what was started, last first, even when a step fails; one failure does not skip the rest. */
export class Teardown {
  #steps: Array<{ name: string; run: () => Promise<unknown> }> = [];
  constructor(private readonly say: (message: string) => void) {}
  add(name: string, run: () => Promise<unknown>): void {
    this.#steps.push({ name, run });
  }
  async run(): Promise<void> {
    for (const step of this.#steps.reverse()) {
      await step
        .run()
        .catch((error: unknown) =>
          this.say(`could not stop ${step.name}: ${error instanceof Error ? error.message : String(error)}`),
        );
    }
    this.#steps = [];
  }
}

/** Progress goes to stderr, so stdout holds only the report (and the JSON as its last line). */
export function progressTo(bench: string): (message: string) => void {
  return (message) => process.stderr.write(`${bench}: ${message}\n`);
}

/** Runs `step` and records its wall time under `name`. */
export async function phase<T>(
  say: (message: string) => void,
  seconds: Record<string, number>,
  name: string,
  step: () => Promise<T>,
): Promise<T> {
  say(`${name}…`);
  const started = performance.now();
  try {
    return await step();
  } finally {
    seconds[name] = (performance.now() - started) / 1000;
  }
}

/** The worker runs as in production: the built CLI and workflow bundle. */
export function buildProduction(): void {
  const built = spawnSync('npm', ['run', 'build', '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) throw new Error('npm run build failed');
}

export interface Stack {
  postgres: RunningPostgres;
  temporal: RunningDevServer;
  simulator: Child;
  upstreamUrl: string;
  temporalClient: Client;
}

export async function startStack(
  simulatorArgs: string[],
  teardown: Teardown,
  postgresSettings: readonly string[] = [],
): Promise<Stack> {
  const postgres = await startEmbeddedPostgres({
    dataDir: `${BENCH_DIR}/pg-${Date.now()}-${process.pid}`,
    persistent: false,
    settings: postgresSettings,
  });
  teardown.add('Postgres', () => postgres.stop());
  const temporal = await startTemporalDevServer();
  teardown.add('Temporal dev server', () => temporal.stop());
  // Its own process, so serving requests does not share an event loop with what is measured.
  const simulator = spawnChild(
    'simulator',
    [DDSYNC_BIN, 'simulator', '--port', '0', '--seed', '1', ...simulatorArgs],
    process.env,
  );
  teardown.add('simulator', () => simulator.stop());
  const [, upstreamUrl] = await simulator.waitForLine(/simulator listening on (http:\/\/\S+)/, 120_000);
  const connection = await Connection.connect({ address: temporal.address });
  teardown.add('Temporal client', () => connection.close());
  return {
    postgres,
    temporal,
    simulator,
    upstreamUrl: upstreamUrl!,
    temporalClient: new Client({ connection, namespace: temporal.namespace }),
  };
}

/** The settings a worker reads; the benchmark's own client is configured from the same ones. */
export function workerEnv(stack: Stack, databaseUrl: string, taskQueue: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DDSYNC_UPSTREAM_URL: stack.upstreamUrl,
    DDSYNC_CLIENT_ID: 'ddsync-demo',
    DDSYNC_CLIENT_SECRET: 'ddsync-demo-secret',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: stack.temporal.address,
    TEMPORAL_NAMESPACE: stack.temporal.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    // info: the worker's few run-level lines ('refresh finished' with its step seconds, which the
    // refresh benchmark reports); nothing per page is logged at info.
    DDSYNC_LOG_LEVEL: 'info',
  };
}

export interface BenchmarkSpec<O extends { json: boolean }, R> {
  name: string;
  usage: string;
  parse(argv: string[]): O;
  run(options: O, seconds: Record<string, number>, teardown: Teardown): Promise<R>;
  report(result: R, options: O): string;
}

/**
 * Runs a benchmark: options (exit 2 on a bad flag), the run, teardown whatever happens, the report
 * (and the result as one JSON line with --json), and an explicit exit code.
 */
export async function runBenchmark<O extends { json: boolean }, R>(spec: BenchmarkSpec<O, R>): Promise<never> {
  const say = progressTo(spec.name);
  const main = async (): Promise<number> => {
    let options: O;
    try {
      options = spec.parse(process.argv.slice(2));
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${spec.usage}\n`);
      return 2;
    }
    const seconds: Record<string, number> = {};
    const teardown = new Teardown(say);
    let result: R;
    try {
      result = await spec.run(options, seconds, teardown);
    } finally {
      // A Temporal call still retrying when teardown closes its connection throws from a timer
      // ("Channel has been shut down"): said, not fatal, so the run's own failure is still reported.
      const closing = (error: Error) => say(`during teardown: ${error.message}`);
      process.on('uncaughtException', closing);
      await phase(say, seconds, 'teardown', () => teardown.run());
    }
    console.log(spec.report(result, options));
    if (options.json) console.log(JSON.stringify(result));
    return 0;
  };
  const code = await main().catch((error: unknown) => {
    say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  });
  // Ends with the benchmark's code, whatever handles (pools, sockets) are still open.
  process.exit(code);
}
