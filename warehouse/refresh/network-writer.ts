import { emptyCounts, type TableCounts } from './counts.ts';
import { writeChanged, type HashedTable } from './hashed-upsert.ts';
import { recordIssues } from './issues.ts';
import type { Network } from './network-rows.ts';
import { lockPageRecord, type PageKey, recordedCounts, recordPage, type RequestCounts } from './page-ledger.ts';
import type { BusinessRow, ConnectionRow, InvitationRow } from './rows.ts';
import type { RecordIssue } from './issues.ts';
import type { Warehouse } from '../database.ts';

/** Businesses, connections and invitations: written when changed, their ids recorded for the sweep. */

export const NETWORK_SCOPE = 'network';
export const INVITATIONS_SCOPE = 'invitations';

const BUSINESSES: HashedTable<BusinessRow> = {
  table: 'businesses',
  columns: {
    id: 'text',
    name: 'text',
    email: 'text',
    username: 'text',
    address_street: 'text',
    address_zip: 'text',
    address_postcode: 'text',
    address_area: 'text',
    address_city: 'text',
    address_country_code: 'text',
    address_country: 'text',
    address_line1: 'text',
    address_line2: 'text',
    eori: 'text',
    vat: 'text',
    system_environment: 'text',
    initial_locale: 'text',
    units: 'text',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    is_caller: 'boolean',
    content_hash: 'text',
  },
};
const CONNECTIONS: HashedTable<ConnectionRow> = {
  table: 'business_connections',
  columns: {
    id: 'text',
    source_business_id: 'text',
    target_business_id: 'text',
    partner_business_id: 'text',
    role: 'text',
    plots_count: 'int4',
    plots_commodities: 'text[]',
    custom_data: 'jsonb',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    content_hash: 'text',
  },
};
const INVITATIONS: HashedTable<InvitationRow> = {
  table: 'business_invitations',
  columns: {
    id: 'text',
    status: 'text',
    email: 'text',
    sender_business_id: 'text',
    business_id: 'text',
    source_is_invitee: 'boolean',
    custom_data: 'jsonb',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
    content_hash: 'text',
  },
};

export async function writeNetwork(
  db: Warehouse,
  runId: string,
  network: Network,
  requests: RequestCounts,
): Promise<TableCounts> {
  return db.transaction().execute(async (trx) => {
    const businessesKey: PageKey = { runId, scope: NETWORK_SCOPE, entity: 'businesses', page: 1 };
    const connectionsKey: PageKey = { runId, scope: NETWORK_SCOPE, entity: 'business_connections', page: 1 };
    // A replay (the first attempt committed, its completion lost) keeps the first attempt's counts.
    const businessesBefore = await lockPageRecord(trx, businessesKey);
    const connectionsBefore = await lockPageRecord(trx, connectionsKey);
    const counts = emptyCounts();
    await writeChanged(trx, BUSINESSES, network.businesses, counts);
    await writeChanged(trx, CONNECTIONS, network.connections, counts);
    await recordIssues(trx, runId, NETWORK_SCOPE, network.issues);
    await recordPage(trx, {
      ...businessesKey,
      ids: network.businesses.map((b) => b.id),
      received: network.businesses.length,
      counts: recordedCounts(businessesBefore, pick(counts, 'businesses')),
      requests,
    });
    await recordPage(trx, {
      ...connectionsKey,
      ids: network.connections.map((c) => c.id),
      received: network.connections.length,
      counts: recordedCounts(connectionsBefore, pick(counts, 'business_connections')),
      requests: { requests: 0, retries: 0, rateLimited: 0 },
    });
    return counts;
  });
}

export async function writeInvitations(
  db: Warehouse,
  runId: string,
  rows: readonly InvitationRow[],
  issues: readonly RecordIssue[],
  requests: RequestCounts,
): Promise<TableCounts> {
  return db.transaction().execute(async (trx) => {
    const key: PageKey = { runId, scope: INVITATIONS_SCOPE, entity: 'business_invitations', page: 1 };
    const before = await lockPageRecord(trx, key);
    const counts = emptyCounts();
    await writeChanged(trx, INVITATIONS, rows, counts);
    await recordIssues(trx, runId, INVITATIONS_SCOPE, issues);
    await recordPage(trx, {
      ...key,
      ids: rows.map((r) => r.id),
      received: rows.length,
      counts: recordedCounts(before, counts),
      requests,
    });
    return counts;
  });
}

function pick(counts: TableCounts, table: string): TableCounts {
  return counts[table] ? { [table]: counts[table] } : {};
}
