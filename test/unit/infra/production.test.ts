import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../../platform/package-root.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../../../infra/production.ts';

describe('production worker settings', () => {
  it('are the same in the Dockerfile as in infra/production.ts (which the benchmark uses)', () => {
    const dockerfile = readFileSync(packagePath('Dockerfile'), 'utf8');
    // The package's own entry point (package.json bin), under tini.
    const { bin } = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { bin: { ddsync: string } };
    expect(dockerfile).toContain(
      `ENTRYPOINT ${JSON.stringify(['tini', '--', 'node', ...WORKER_NODE_FLAGS, bin.ddsync])}`.replace(/","/g, '", "'),
    );
    expect(dockerfile).toContain('CMD ["worker"]');
    for (const [name, value] of Object.entries(WORKER_ENV)) expect(dockerfile).toContain(`ENV ${name}=${value}`);
  });
});
