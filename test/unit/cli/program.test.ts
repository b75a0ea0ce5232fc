import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { ddsyncProgram } from '../../../cli/program.ts';
import { UsageError } from '../../../cli/usage.ts';
import { DDSYNC_BIN } from '../../support/processes.ts';

const BATCH = '0b4e8f36-9a64-4d1b-8d3e-6a3c3e0f6a11';

function path(command: Command | undefined): string {
  const names: string[] = [];
  for (let c = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The UsageError a command line makes (parsing stops before any command runs), and whose help goes with it. */
async function mistake(args: string[]): Promise<{ message: string; command: string }> {
  const program = ddsyncProgram('0.0.0', () => {
    throw new Error('a command ran');
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof UsageError) return { message: error.message, command: path(error.command) };
    throw error;
  }
  throw new Error(`no UsageError for ${args.join(' ')}`);
}

/** Every command and subcommand of the program. */
function commands(command: Command): Command[] {
  return command.commands.flatMap((c) => [c, ...commands(c)]);
}

describe('the command line', () => {
  it('names the flag, the rule and the value of a bad flag, with the command whose help goes with it', async () => {
    expect(await mistake(['demo', '--plots', 'many'])).toEqual({
      message: '--plots must be a whole number from 10 to 1000000, got "many"',
      command: 'demo',
    });
    expect(await mistake(['demo', '--time-scale', '0'])).toEqual({
      message: '--time-scale must be a number from 0.00001 to 1, got "0"',
      command: 'demo',
    });
    expect(await mistake(['submissions', 'status', 'not-a-batch'])).toEqual({
      message: 'BATCH must be a batch id (a UUID), got "not-a-batch"',
      command: 'submissions status',
    });
    expect((await mistake(['refresh', '--jsn'])).message).toBe("unknown option '--jsn'\n(Did you mean --json?)");
  });

  it('says which subcommand a flag goes with, and which subcommands or arguments are missing or unknown', async () => {
    expect(await mistake(['submissions', 'cancel', BATCH, '--wait'])).toEqual({
      message: '--wait goes with status or retry only',
      command: 'submissions cancel',
    });
    expect(await mistake(['pdfs', 'status', '--file', 'ids.txt'])).toEqual({
      message: '--file goes with add only',
      command: 'pdfs status',
    });
    expect(await mistake(['invitations', 'list', '--custom-data', '{}'])).toEqual({
      message: '--custom-data goes with accept, reject or cancel only',
      command: 'invitations list',
    });
    expect(await mistake(['pdfs'])).toEqual({
      message: 'a subcommand is required: add, status or archive',
      command: 'pdfs',
    });
    expect(await mistake([])).toEqual({ message: 'a command is required', command: '' });
    expect(await mistake(['pdfs', 'remove', 'x'])).toEqual({
      message: 'unknown subcommand "remove": expected add, status or archive',
      command: 'pdfs',
    });
    expect(await mistake(['schedule', 'aply'])).toEqual({
      message: 'unknown subcommand "aply": expected apply or list\n(Did you mean apply?)',
      command: 'schedule',
    });
    expect(await mistake(['help', 'refesh'])).toEqual({ message: 'unknown command "refesh"', command: '' });
    expect(await mistake(['refesh'])).toEqual({
      message: 'unknown command "refesh"\n(Did you mean refresh?)',
      command: '',
    });
    expect(await mistake(['submit'])).toEqual({ message: "missing required argument 'FILE'", command: 'submit' });
    expect(await mistake(['refresh', 'now'])).toEqual({
      message: "too many arguments for 'refresh'. Expected 0 arguments but got 1.",
      command: 'refresh',
    });
  });

  it('describes every command and every flag', () => {
    for (const command of commands(ddsyncProgram('0.0.0', () => undefined))) {
      expect(command.description(), path(command)).not.toBe('');
      for (const option of command.options) expect(option.description, `${path(command)} ${option.long}`).not.toBe('');
    }
  });

  it('answers --help without loading any command (nor Temporal, Kysely, pg, nor zod: no configuration is read), and ends a usage error with exit code 2 and the help', () => {
    // A module hook that lists every module the process resolves.
    const hook = `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('resolved ' + r.url + '\\n'); return r; }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    for (const args of [['--help'], ['worker', '--help'], ['submissions', 'status', '--help'], ['refresh', '-h']]) {
      const run = spawnSync(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(register)}`, DDSYNC_BIN, ...args],
        { encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^Usage: ddsync /);
      const loaded = run.stderr.split('\n').filter((line) => line.startsWith('resolved '));
      expect(loaded.some((line) => line.includes('/cli/program.ts'))).toBe(true);
      expect(
        loaded.filter((line) => /\/cli\/commands\/|@temporalio|\/kysely\/|\/pg\/|\/zod\//.test(line)),
        args.join(' '),
      ).toEqual([]);
    }
    const bad = spawnSync(process.execPath, [DDSYNC_BIN, 'demo', '--plots', 'many'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(
      /^ddsync demo: --plots must be a whole number from 10 to 1000000, got "many"\n\nUsage: ddsync demo /,
    );
  });
});
