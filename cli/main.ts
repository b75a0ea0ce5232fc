import { readFileSync } from 'node:fs';
import { failureMessage } from '../workflows/failure-message.ts';
import { UsageError } from './usage.ts';
import { ConfigError } from '../platform/config.ts';
import { scrubSecrets } from '../platform/secrets.ts';
import { packagePath } from '../platform/package-root.ts';
import { HELP } from './help.ts';
import { stopWhenNpmParentExits } from '../infra/parent-watch.ts';

interface Command {
  run(argv: string[]): Promise<number>;
}

// Loaded lazily, and only the one that runs: `ddsync --help` and `ddsync simulator` should not pay
// for Temporal's native module or compile every command's sources.
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  simulator: { summary: 'run the local simulator of the due-diligence service', load: () => import('./commands/simulator.ts') },
  worker: { summary: 'run a Temporal worker (connects to Temporal, Postgres and the service)', load: () => import('./commands/worker.ts') },
  stack: { summary: 'start the embedded Postgres and a Temporal dev server (with UI) until Ctrl-C', load: () => import('./commands/stack.ts') },
  config: { summary: 'show every setting, its value source and problems (secrets masked)', load: () => import('./commands/config.ts') },
  migrate: { summary: 'apply the warehouse migrations (the worker and the demo also do on start)', load: () => import('./commands/migrate.ts') },
  refresh: { summary: 'start a warehouse refresh (--wait: follow it with progress and a summary)', load: () => import('./commands/refresh.ts') },
  schedule: { summary: 'create or update ddsync\'s Temporal schedules (the periodic refresh), or list them', load: () => import('./commands/schedule.ts') },
  demo: { summary: 'run the whole product on this machine: embedded Postgres, Temporal, the simulator, a refresh', load: () => import('./commands/demo.ts') },
  submit: { summary: 'submit a file of shipments as transactions, durably (--wait: follow them to DDS references)', load: () => import('./commands/submit.ts') },
  submissions: { summary: 'where submitted batches stand: submissions list | status BATCH | cancel BATCH | retry BATCH', load: () => import('./commands/submissions.ts') },
  receiver: { summary: 'run the webhook receiver (verifies deliveries, stores each event once, wakes transactions)', load: () => import('./commands/receiver.ts') },
  webhooks: { summary: 'webhooks at the service: list | send-example EVENT | reconcile', load: () => import('./commands/webhooks.ts') },
  invitations: { summary: 'business invitations: list | accept | reject | cancel ID [--custom-data JSON]', load: () => import('./commands/invitations.ts') },
  pdfs: { summary: 'archive survey-response PDFs: pdfs add ID... | add --file F | status | archive', load: () => import('./commands/pdfs.ts') },
};

function version(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function usage(): string {
  const lines = ['usage: ddsync <command> [flags]', '', 'commands:'];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(12)}${summary}`);
  lines.push('', 'ddsync <command> --help shows a command\'s flags. Configuration comes from environment variables (see docs/configuration.md).');
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
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === 'version') {
    process.stdout.write(`ddsync ${version()}\n`);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    process.stderr.write(`ddsync: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  const help = HELP[name] ?? '';
  if (name !== 'simulator' && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${help}\n`);
    return 0;
  }
  const command = await entry.load();
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`ddsync ${name}: ${error.message}\n\n${help}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`ddsync ${name}: ${error.message}\nSee docs/configuration.md (or run ddsync config).\n`);
      return 2;
    }
    process.stderr.write(`ddsync ${name}: ${scrubSecrets(describeFailure(error))}\n`);
    return 1;
  }
}

stopWhenNpmParentExits();
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Long-running commands never return here; one-shot commands end now even if a library left a handle open.
if (!['simulator', 'worker', 'receiver'].includes(process.argv[2] ?? '') || code !== 0) process.exit(code);
