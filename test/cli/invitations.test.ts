import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { runDdsync, lastJsonLine } from '../support/processes.ts';

describe('ddsync invitations', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 2, plots: 20 });
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DDSYNC_UPSTREAM_URL: sim.url,
      DDSYNC_CLIENT_ID: 'ddsync-demo',
      DDSYNC_CLIENT_SECRET: 'ddsync-demo-secret',
      DDSYNC_LOG_LEVEL: 'warn',
    };
  });
  afterAll(() => sim?.close());

  const pending = () => sim.control.invitations().filter((i) => i.status === 'PENDING');
  const supplierIds = () => new Set(sim.control.suppliers().map((s) => s.id));

  it('lists the invitations received', async () => {
    const run = runDdsync(['invitations', 'list', '--json'], env);
    expect(await run.exited).toBe(0);
    const listed = lastJsonLine<Array<{ id: string; status: string }>>(run.output());
    expect(listed.map((i) => i.id).sort()).toEqual(
      sim.control
        .invitations()
        .map((i) => i.id)
        .sort(),
    );
  });

  it('explains 409 (already connected) and 501 (not enabled) in plain words', async () => {
    const fromSupplier = pending().find((i) => supplierIds().has(i.senderBusinessId))!;
    const conflict = runDdsync(['invitations', 'accept', fromSupplier.id], env);
    expect(await conflict.exited).toBe(1);
    expect(conflict.output()).toContain('the two businesses are already connected, so there is nothing to accept');
    sim.control.setInvitationsEnabled(false);
    try {
      const disabled = runDdsync(['invitations', 'reject', fromSupplier.id], env);
      expect(await disabled.exited).toBe(1);
      expect(disabled.output()).toContain('invitations are not enabled on this environment of the service');
    } finally {
      sim.control.setInvitationsEnabled(true);
    }
  });

  it("accepts an invitation with customData, checking the contract's rules first", async () => {
    const fromProspect = pending().find((i) => !supplierIds().has(i.senderBusinessId))!;
    const bad = runDdsync(['invitations', 'accept', fromProspect.id, '--custom-data', '{"nested": {"a": 1}}'], env);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toMatch(/customData\.nested/);
    const ok = runDdsync(['invitations', 'accept', fromProspect.id, '--custom-data', '{"ref": "R-1"}'], env);
    expect(await ok.exited).toBe(0);
    expect(ok.output()).toContain(`invitation ${fromProspect.id} is now ACCEPTED`);
    expect(sim.control.invitations().find((i) => i.id === fromProspect.id)).toMatchObject({
      status: 'ACCEPTED',
      customData: { ref: 'R-1' },
    });
  });
});
