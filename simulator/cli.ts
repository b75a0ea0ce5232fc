// `ddsync simulator`: parse flags, start the simulator, print one line, stop on SIGINT/SIGTERM.
import { parseFaults } from './faults.ts';
import { startSimulator, type SimulatorOptions } from './index.ts';

export const SIMULATOR_HELP = `usage: ddsync simulator [flags]

  --port N                 listen port (default 4010; 0 = any free port)
  --host H                 listen address (default 127.0.0.1)
  --seed N                 dataset seed, non-negative integer (default 1)
  --suppliers N            direct suppliers, 1..10000 (default 5)
  --plots N                total distinct plots incl. own (default 2000)
  --own-plots N            plots of the calling business (default 1% of plots, 1..1000)
  --vertices N             vertices of every plot's outer ring, 3..100000 (default 5-9 at random)
  --huge-plot-vertices N   the first plot of the first supplier drawn with N vertices, 3..5000000
                           (about 25 bytes of JSON each: 2000000 make a plot of 50 MB)
  --faults P|JSON          none | flaky | hostile, or a JSON object (see docs/simulator.md)
  --time-scale X           multiplies every simulated delay (default 1; 0.001 = 1000x faster)
  --client-id S            machine-to-machine client id (default ddsync-demo)
  --client-secret S        machine-to-machine client secret (default ddsync-demo-secret)
  --token-lifetime N       access token lifetime in seconds (default 86400)
  --resolve HOST=ADDR:PORT deliver webhooks for HOST to ADDR:PORT over http (repeatable)
  --no-invitations         PATCH /business-invitations/{id} answers 501
  --no-transactions-entitlement  transaction endpoints answer 403
  --error-ratio X          share of submitted transactions ending in ERROR, 0..1 (default 0.1)
  --help                   show this help`;

class FlagError extends Error {}

const VALUE_FLAGS = new Set([
  'port',
  'host',
  'seed',
  'suppliers',
  'plots',
  'own-plots',
  'vertices',
  'huge-plot-vertices',
  'faults',
  'time-scale',
  'client-id',
  'client-secret',
  'token-lifetime',
  'resolve',
  'error-ratio',
]);
const BOOLEAN_FLAGS = new Set(['no-invitations', 'no-transactions-entitlement', 'help']);

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new FlagError(`--${flag} must be an integer from ${min} to ${max} (got "${raw}")`);
  return n;
}

function decimal(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new FlagError(`--${flag} must be a number from ${min} to ${max} (got "${raw}")`);
  return n;
}

/** Parses argv into options; throws FlagError naming the flag and the rule. */
export function parseSimulatorFlags(argv: string[]): { help: boolean; options: SimulatorOptions } {
  const options: SimulatorOptions = {};
  const resolve: Record<string, string> = {};
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new FlagError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq >= 0) throw new FlagError(`--${name} takes no value`);
      if (name === 'help') help = true;
      if (name === 'no-invitations') options.invitationsEnabled = false;
      if (name === 'no-transactions-entitlement')
        options.entitlements = { ...options.entitlements, canManageTransactions: false };
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new FlagError(`unknown flag --${name} (see --help)`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new FlagError(`--${name} needs a value`);
    switch (name) {
      case 'port':
        options.port = integer(name, value, 0, 65535);
        break;
      case 'host':
        if (value === '') throw new FlagError('--host must not be empty');
        options.host = value;
        break;
      case 'seed':
        options.seed = integer(name, value, 0, 0xffffffff);
        break;
      case 'suppliers':
        options.suppliers = integer(name, value, 1, 10_000);
        break;
      case 'plots':
        options.plots = integer(name, value, 0, 100_000_000);
        break;
      case 'own-plots':
        options.ownPlots = integer(name, value, 0, 100_000_000);
        break;
      case 'vertices':
        options.vertices = integer(name, value, 3, 100_000);
        break;
      case 'huge-plot-vertices':
        options.hugePlotVertices = integer(name, value, 3, 5_000_000);
        break;
      case 'faults':
        try {
          options.faults = parseFaults(value);
        } catch (error) {
          throw new FlagError(`--faults: ${(error as Error).message}`);
        }
        break;
      case 'time-scale':
        options.timeScale = decimal(name, value, 0, 1000);
        break;
      case 'client-id':
        if (value === '') throw new FlagError('--client-id must not be empty');
        options.clientId = value;
        break;
      case 'client-secret':
        if (value === '') throw new FlagError('--client-secret must not be empty');
        options.clientSecret = value;
        break;
      case 'token-lifetime':
        options.tokenLifetimeSeconds = integer(name, value, 0, 10 * 365 * 86_400);
        break;
      case 'error-ratio':
        options.transactionErrorRatio = decimal(name, value, 0, 1);
        break;
      case 'resolve': {
        const m = /^([^=\s]+)=([^:\s]+):(\d{1,5})$/.exec(value);
        if (!m || Number(m[3]) > 65535)
          throw new FlagError(
            `--resolve must be HOST=ADDRESS:PORT, e.g. hooks.ddsync.test=127.0.0.1:8080 (got "${value}")`,
          );
        resolve[m[1] ?? ''] = `${m[2]}:${m[3]}`;
        break;
      }
    }
  }
  if (options.ownPlots !== undefined && options.ownPlots > (options.plots ?? 2000))
    throw new FlagError('--own-plots must not exceed --plots');
  if (Object.keys(resolve).length > 0) options.resolve = resolve;
  return { help, options };
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code (2 for bad flags). */
export async function runSimulatorCli(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseSimulatorFlags>;
  try {
    parsed = parseSimulatorFlags(argv);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`ddsync simulator: ${error.message}\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(`${SIMULATOR_HELP}\n`);
    return 0;
  }
  const { options } = parsed;
  const sim = await startSimulator({ ...options, log: (line) => process.stderr.write(`${line}\n`) });
  const plots = sim.control.countPlots();
  process.stdout.write(
    `simulator listening on ${sim.url} (seed ${options.seed ?? 1}, ${sim.control.suppliers().length} suppliers, ${plots} plots)\n`,
  );
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void sim.close().then(() => resolve(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
