import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../../platform/package-root.ts';
import { BUILT_CLI, BUILT_WORKFLOW_BUNDLE, WORKER_ENV, WORKER_NODE_FLAGS } from '../../../infra/production.ts';

describe('production worker settings', () => {
  it('are the same in the Dockerfile as in infra/production.ts (which the benchmark uses)', () => {
    const dockerfile = readFileSync(packagePath('Dockerfile'), 'utf8');
    expect(dockerfile).toContain(
      `ENTRYPOINT ${JSON.stringify(['node', ...WORKER_NODE_FLAGS, BUILT_CLI])}`.replace(/","/g, '", "'),
    );
    expect(dockerfile).toContain(`CMD ["worker", "--bundle", "${BUILT_WORKFLOW_BUNDLE}"]`);
    for (const [name, value] of Object.entries(WORKER_ENV)) expect(dockerfile).toContain(`ENV ${name}=${value}`);
  });
});
