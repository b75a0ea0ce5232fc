import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase } from '../support/databases.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import type { BusinessConnection, BusinessInvitation } from '../../schema/upstream.ts';
import { toInvitationRows, toNetwork } from '../../warehouse/refresh/network-rows.ts';
import { writeInvitations, writeNetwork } from '../../warehouse/refresh/network-writer.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import type { TableCounts } from '../../warehouse/refresh/counts.ts';

// A worker killed after the network's or the invitations' transaction committed, before Temporal heard
// of it: the activity runs again in the same run. The run's record must say what the run wrote (the
// first attempt's inserts), not what the replay found (every row unchanged), or the same refresh
// reports differently depending on whether a worker died (scale-out.test.ts caught it in CI).
const RUN = '00000000-0000-4000-8000-0000000000d1';
const NONE = { requests: 1, retries: 0, rateLimited: 0 };

const SUPPLIERS: BusinessConnection[] = [
  { id: 'c1', sourceBusiness: { id: 's1', name: 'Supplier 1' }, targetBusiness: { id: 'me', name: 'Me' } },
  { id: 'c2', sourceBusiness: { id: 's2', name: 'Supplier 2' }, targetBusiness: { id: 'me', name: 'Me' } },
];
const INVITATIONS: BusinessInvitation[] = [
  { id: 'i1', email: 'a@example.com', status: 'PENDING', sentByUser: { businessId: 's1' } },
  { id: 'i2', email: 'b@example.com', status: 'ACCEPTED', sentByUser: { businessId: 's2' } },
];

describe('network and invitations writer', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('network_writer'), 2);
    await migrateToLatest(db);
    await beginRun(db, RUN, null);
  });
  afterAll(async () => db?.destroy());

  const recorded = async (scope: string) =>
    Object.fromEntries(
      (
        await sql<{ entity: string; counts: TableCounts; requests: number }>`
          select entity, counts, requests from sync_pages where run_id = ${RUN}::uuid and scope = ${scope}`.execute(db)
      ).rows.map((r) => [r.entity, { counts: r.counts, requests: r.requests }]),
    );

  it('keeps the first attempt’s counts when the network is written again in the same run', async () => {
    const first = await writeNetwork(db, RUN, toNetwork(SUPPLIERS, []), NONE);
    expect(first['businesses']!.inserted).toBe(3);
    expect(first['business_connections']!.inserted).toBe(2);
    const afterFirst = await recorded('network');

    const replay = await writeNetwork(db, RUN, toNetwork(SUPPLIERS, []), NONE);
    expect(replay['businesses']).toEqual({ inserted: 0, updated: 0, unchanged: 3, deleted: 0 });
    const afterReplay = await recorded('network');
    expect(afterReplay['businesses']!.counts).toEqual(afterFirst['businesses']!.counts);
    expect(afterReplay['business_connections']!.counts).toEqual(afterFirst['business_connections']!.counts);
    // Requests add up over attempts: both were made.
    expect(afterReplay['businesses']!.requests).toBe(2);
  });

  it('keeps the first attempt’s counts for invitations, and adds what a replay itself changed', async () => {
    const { rows, issues } = toInvitationRows(INVITATIONS);
    await writeInvitations(db, RUN, rows, issues, NONE);
    expect((await recorded('invitations'))['business_invitations']!.counts).toEqual({
      business_invitations: { inserted: 2, updated: 0, unchanged: 0, deleted: 0 },
    });
    // The source moved between the attempts: one invitation accepted since.
    const moved = toInvitationRows([INVITATIONS[0]!, { ...INVITATIONS[1]!, status: 'REJECTED' }]);
    await writeInvitations(db, RUN, moved.rows, moved.issues, NONE);
    expect((await recorded('invitations'))['business_invitations']!.counts).toEqual({
      business_invitations: { inserted: 2, updated: 1, unchanged: 0, deleted: 0 },
    });
  });
});
