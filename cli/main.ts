import { readdirSync, readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import { failureMessage } from '../workflows/failure-message.ts';
import { UsageError } from './usage.ts';
import { ConfigError } from '../platform/config-error.ts';
import { scrubSecrets } from '../platform/secrets.ts';
import { packagePath } from '../platform/package-root.ts';
import { ddsyncProgram } from './program.ts';
import { stopWhenNpmParentExits } from '../infra/parent-watch.ts';

/** The package's version and the warehouse schema it migrates to (its last migration). */
function version(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  const last = readdirSync(packagePath('sql', 'migrations'))
    .filter((name) => /^\d{4}_.+\.sql$/.test(name))
    .sort()
    .at(-1);
  return `${pkg.version} (warehouse schema ${last?.replace(/\.sql$/, '') ?? 'none'})`;
}

/**
 * The reason of a failure, not Temporal's wrapper ("Workflow execution failed"): the same message
 * workflows record (failureMessage); the stack only at DDSYNC_LOG_LEVEL=debug or trace.
 */
function describeFailure(error: unknown): string {
  const debug = ['debug', 'trace'].includes(process.env.DDSYNC_LOG_LEVEL ?? '');
  return `${failureMessage(error)}${debug && error instanceof Error && error.stack ? `\n${error.stack}` : ''}`;
}

/** `ddsync refresh`, `ddsync submissions` (also for `submissions status`): how messages name the command. */
function title(command: Command | undefined): string {
  let top = command;
  while (top?.parent?.parent) top = top.parent;
  return top?.parent ? `ddsync ${top.name()}` : 'ddsync';
}

async function main(argv: string[]): Promise<number> {
  let code = 0;
  let running: Command | undefined;
  const program = ddsyncProgram(version(), (c) => {
    code = c;
  });
  program.hook('preAction', (_program, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    // --help and --version: written already.
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof UsageError) {
      const command = error.command ?? running ?? program;
      process.stderr.write(`${title(command)}: ${error.message}\n\n`);
      command.outputHelp({ error: true });
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`${title(running)}: ${error.message}\nSee docs/configuration.md (or run ddsync config).\n`);
      return 2;
    }
    process.stderr.write(`${title(running)}: ${scrubSecrets(describeFailure(error))}\n`);
    return 1;
  }
}

stopWhenNpmParentExits();
// `ddsync config | head`: a reader that stops reading is not a failure (no stack trace for a closed pipe).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Long-running commands never return here; one-shot commands end now even if a library left a handle open.
if (!['simulator', 'worker', 'receiver'].includes(process.argv[2] ?? '') || code !== 0) process.exit(code);
