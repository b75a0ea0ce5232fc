import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { createTestDatabase } from '../support/databases.ts';
import { openWarehouse, type Warehouse } from '../../warehouse/database.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { recordAttempts, recordWebhooks, storeEvent } from '../../warehouse/webhooks/ledger.ts';
import { recordTransaction } from '../../warehouse/submission/transaction-ledger.ts';
import { recordSightings } from '../../warehouse/submission/bulk-ledger.ts';
import type { BusinessConnection, Transaction, Webhook, WebhookAttempt } from '../../schema/upstream.ts';
import { toNetwork } from '../../warehouse/refresh/network-rows.ts';
import { writeNetwork } from '../../warehouse/refresh/network-writer.ts';
import { beginRun } from '../../warehouse/refresh/run-ledger.ts';
import { rowsWritten } from '../../warehouse/refresh/counts.ts';

// Writes without a run keep what they replaced on the row itself (replaced_values): a NUL or a lone
// surrogate from outside is stored as U+FFFD, recorded by path with the value as sent, and never
// fails the write (before, a NUL made Postgres refuse the event or the transaction's answer).
type Replaced = Record<string, { rule: string; sent: string }>;

// 5,000 characters that do not compress (an index entry of compressible text may be compressed to fit).
const LONG_KEY = Array.from({ length: 250 }, (_, i) => createHash('sha1').update(String(i)).digest('base64'))
  .join('')
  .slice(0, 5_000);

describe('text Postgres cannot hold, on rows written without a run', () => {
  let db: Warehouse;
  beforeAll(async () => {
    db = openWarehouse(await createTestDatabase('unstorable_rows'), 2);
    await migrateToLatest(db);
    await sql`
      insert into submission_batches (id, source) values ('00000000-0000-4000-8000-0000000000b1', 'shipments.ndjson');
      insert into transactions (key, batch_id, state, status) values
        ('k1', '00000000-0000-4000-8000-0000000000b1', 'submitted', 'SUBMITTED'),
        ('k2', '00000000-0000-4000-8000-0000000000b1', 'submitted', 'SUBMITTED')`.execute(db);
  });
  afterAll(async () => db?.destroy());

  it('stores a webhook event with a NUL and lone surrogates once, recording each by path', async () => {
    const payload = {
      event: 'transaction.updated',
      data: { id: 'tx\u0000', name: 'a\ud800', 'k\u0000': [1, '\\u0000'] },
    };
    const event = {
      msgId: 'msg_1',
      webhookName: 'ddsync',
      eventType: 'transaction.updated',
      payload,
      sentAt: null,
      transactionId: 'tx\u0000',
    };
    expect(await storeEvent(db, event)).toBe(true);
    expect(await storeEvent(db, event)).toBe(false);
    const row = await sql<{ payload: unknown; transaction_id: string; replaced_values: Replaced; deliveries: number }>`
      select payload, transaction_id, replaced_values, deliveries from webhook_events where msg_id = 'msg_1'`.execute(
      db,
    );
    const stored = row.rows[0]!;
    expect(stored.deliveries).toBe(2);
    expect(stored.transaction_id).toBe('tx\ufffd');
    // An escaped backslash before u0000 is text, stored as sent.
    expect(stored.payload).toEqual({
      event: 'transaction.updated',
      data: { id: 'tx\ufffd', name: 'a\ufffd', 'k\ufffd': [1, '\\u0000'] },
    });
    expect(Object.keys(stored.replaced_values).sort()).toEqual([
      'payload.data.id',
      'payload.data.name',
      'payload.data["k\\u0000"]',
      'transactionId',
    ]);
    expect(JSON.parse(stored.replaced_values['payload.data.name']!.sent)).toBe('a\ud800');
    expect(JSON.parse(stored.replaced_values['payload.data["k\\u0000"]']!.sent)).toBe('k\u0000');
  });

  it("stores the service's answers about a transaction with U+FFFD, one by one and in bulk, keeping what was sent", async () => {
    const answer = {
      id: 't-1',
      status: 'AVAILABLE',
      referenceNumber: 'REF\u0000 1',
      verificationNumber: '\udc00V',
    } as Transaction;
    await recordTransaction(db, 'k1', answer, 'poll');
    await recordSightings(db, [{ key: 'k2', transaction: { ...answer, id: 't-2' }, source: 'poll' }], {
      firstPollMs: 1_000,
      maxPollMs: 60_000,
      euWaitMs: 1_000,
      deadlineMs: 3_600_000,
    });
    const rows = await sql<{
      key: string;
      reference_number: string;
      verification_number: string;
      replaced_values: Replaced;
    }>`
      select key, reference_number, verification_number, replaced_values from transactions order by key`.execute(db);
    for (const row of rows.rows) {
      expect(row.reference_number).toBe('REF\ufffd 1');
      expect(row.verification_number).toBe('\ufffdV');
      expect(Object.keys(row.replaced_values).sort()).toEqual(['referenceNumber', 'verificationNumber']);
      expect(JSON.parse(row.replaced_values['referenceNumber']!.sent)).toBe('REF\u0000 1');
    }
  });

  it('stores webhooks and attempts with U+FFFD, and a webhook listed again unchanged is not rewritten', async () => {
    const hook: Webhook = {
      id: 'wh-1',
      url: 'https://example.test/hook',
      description: 'mine\u0000',
      events: ['transaction.updated'],
      isActive: true,
    };
    await recordWebhooks(db, [hook]);
    const first = await sql<{ description: string; replaced_values: Replaced; changed_at: Date }>`
      select description, replaced_values, changed_at from webhooks where id = 'wh-1'`.execute(db);
    expect(first.rows[0]!.description).toBe('mine\ufffd');
    expect(Object.keys(first.rows[0]!.replaced_values)).toEqual(['description']);
    await recordWebhooks(db, [hook]);
    const again = await sql<{ changed_at: Date }>`select changed_at from webhooks where id = 'wh-1'`.execute(db);
    expect(again.rows[0]!.changed_at).toEqual(first.rows[0]!.changed_at);

    const attempt = {
      id: 'att-1',
      msgId: 'msg_1',
      url: hook.url,
      response: 'ok\u0000',
      responseStatusCode: 200,
      status: 'SUCCESS',
      timestamp: '2026-01-01T00:00:00.000Z',
      msg: { eventType: 'transaction.updated', payload: {}, id: 'msg_1' },
    } as unknown as WebhookAttempt;
    expect(await recordAttempts(db, 'wh-1', [attempt])).toBe(1);
    const stored = await sql<{ response: string; replaced_values: Replaced }>`
      select response, replaced_values from webhook_attempts where id = 'att-1'`.execute(db);
    expect(stored.rows[0]!.response).toBe('ok\ufffd');
    expect(stored.rows[0]!.replaced_values['response']!.sent).toBe('"ok\\u0000"');
  });

  it('writes a hostile network listing once, its replacements recorded by every run that reads it', async () => {
    const listing: BusinessConnection[] = [
      {
        id: 'c1',
        sourceBusiness: { id: 's1', name: 'Supplier\u0000 SA', addressCity: '\ud800' },
        targetBusiness: { id: 'me', name: 'Me' },
        // A key too long for a path in the issues' unique index, holding a NUL.
        customData: { 'k\u0000': 'v', [`${LONG_KEY}\u0000`]: 1 },
      },
    ];
    const none = { requests: 0, retries: 0, rateLimited: 0 };
    const runs = ['00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-0000000000c2'];
    const written: number[] = [];
    for (const run of runs) {
      await beginRun(db, run, null);
      written.push(rowsWritten(await writeNetwork(db, run, toNetwork(listing, []), none)));
    }
    // Compared as sent: the second read writes nothing.
    expect(written).toEqual([3, 0]);
    const business = await sql<{ name: string; address_city: string }>`
      select name, address_city from businesses where id = 's1'`.execute(db);
    expect(business.rows).toEqual([{ name: 'Supplier\ufffd SA', address_city: '\ufffd' }]);
    const connection = await sql<{
      custom_data: unknown;
    }>`select custom_data from business_connections where id = 'c1'`.execute(db);
    expect(connection.rows[0]!.custom_data).toEqual({ 'k\ufffd': 'v', [`${LONG_KEY}\ufffd`]: 1 });
    for (const run of runs) {
      const issues = await sql<{ field: string; sent_value: string }>`
        select field, sent_value from sync_issues where run_id = ${run}::uuid and action = 'replaced' order by field collate "C"`.execute(
        db,
      );
      const long = issues.rows.splice(
        issues.rows.findIndex((r) => r.field.length > 100),
        1,
      )[0]!;
      expect(long.field).toMatch(/… \(5020 characters, sha1 [0-9a-f]{16}\)$/);
      expect(long.field.startsWith(`customData["${LONG_KEY.slice(0, 500)}`)).toBe(true);
      expect(long.field.length).toBeLessThanOrEqual(600);
      expect(JSON.parse(long.sent_value)).toBe(`${LONG_KEY}\u0000`);
      expect(issues.rows).toEqual([
        { field: 'customData["k\\u0000"]', sent_value: '"k\\u0000"' },
        { field: 'sourceBusiness.addressCity', sent_value: '"\\ud800"' },
        { field: 'sourceBusiness.name', sent_value: '"Supplier\\u0000 SA"' },
      ]);
    }
  });
});
