import { readFileSync } from 'node:fs';
import { failureMessage } from '../workflows/failure-message.ts';
import { UsageError } from './usage.ts';
import { ConfigError } from '../infra/config.ts';
import { scrubSecrets } from '../infra/secrets.ts';
import { packagePath } from '../infra/package-root.ts';

interface Command {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

// Loaded lazily: `ddsync simulator` should not pay for Temporal's native module, and so on.
const COMMANDS: Record<string, () => Promise<Command>> = {
  simulator: () => import('./commands/simulator.ts'),
  worker: () => import('./commands/worker.ts'),
  stack: () => import('./commands/stack.ts'),
  config: () => import('./commands/config.ts'),
  migrate: () => import('./commands/migrate.ts'),
  refresh: () => import('./commands/refresh.ts'),
  schedule: () => import('./commands/schedule.ts'),
  demo: () => import('./commands/demo.ts'),
  submit: () => import('./commands/submit.ts'),
  submissions: () => import('./commands/submissions.ts'),
  receiver: () => import('./commands/receiver.ts'),
  webhooks: () => import('./commands/webhooks.ts'),
  invitations: () => import('./commands/invitations.ts'),
  pdfs: () => import('./commands/pdfs.ts'),
};

function version(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

async function usage(): Promise<string> {
  const lines = ['usage: ddsync <command> [flags]', '', 'commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(12)}${(await load()).summary}`);
  lines.push('', 'ddsync <command> --help shows a command\'s flags. Configuration comes from environment variables (see README).');
  return lines.join('\n');
}

/**
 * The reason of a failure, not Temporal's wrapper ("Workflow execution failed"): the same message
 * workflows record (failureMessage); the stack only at DDSYNC_LOG_LEVEL=debug or trace.
 */
function describeFailure(error: unknown): string {
  const debug = ['debug', 'trace'].includes(process.env.DDSYNC_LOG_LEVEL ?? '');
  return `${failureMessage(error)}${debug && error instanceof Error && error.stack ? `\n${error.stack}` : ''}`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${await usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`ddsync ${version()}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`ddsync: unknown command "${name}"\n\n${await usage()}\n`);
    return 2;
  }
  const command = await load();
  if (name !== 'simulator' && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`ddsync ${name}: ${error.message}\n\n${command.help}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`ddsync ${name}: ${error.message}\nSee "Configuration" in the README.\n`);
      return 2;
    }
    process.stderr.write(`ddsync ${name}: ${scrubSecrets(describeFailure(error))}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Long-running commands never return here; one-shot commands end now even if a library left a handle open.
if (!['stack', 'simulator', 'worker', 'receiver'].includes(process.argv[2] ?? '') || code !== 0) process.exit(code);
