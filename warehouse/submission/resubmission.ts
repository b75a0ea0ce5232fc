import { sql } from 'kysely';
import type { Warehouse } from '../database.ts';

/**
 * `ddsync submissions retry BATCH`: transactions that ended `failed` although the service never
 * refused them go on under their key. Two failures qualify, recognised by their recorded message:
 * - a 401 (`401 unauthorized ...`): earlier versions of ddsync ended a transaction when a refreshed
 *   token was refused too; a 401 only refuses a token, and is now retried, never final;
 * - credentials refused by the token endpoint (`client credentials refused`): final for the worker
 *   that met it, over once DDSYNC_CLIENT_ID / DDSYNC_CLIENT_SECRET are corrected.
 * 400 and 403 (the service refused the transaction or the business) are not sent again.
 * A reopened transaction is `pending` again: the batch's next run (`restart`) starts its workflow
 * anew, which finds what an earlier attempt created by its customId and goes on with it.
 */

/** The messages of those failures (as UnauthorizedError and CredentialsRefusedError word them). */
export const RESUBMITTABLE_FAILURE = '\\m401 unauthori[sz]ed|client credentials refused';

/** Keys of `batchId` that ended failed for a reason that may be gone (see above), at most `limit`. */
export async function resubmittableKeys(
  db: Warehouse,
  batchId: string,
  limit = 5,
): Promise<{ count: number; keys: string[] }> {
  const { rows } = await sql<{ count: number; keys: string[] | null }>`
    select count(*)::int as count, (array_agg(key order by key))[1:${limit}] as keys
    from transactions where batch_id = ${batchId}::uuid and state = 'failed' and last_error ~* ${RESUBMITTABLE_FAILURE}`.execute(
    db,
  );
  return { count: rows[0]?.count ?? 0, keys: rows[0]?.keys ?? [] };
}

/**
 * Makes those transactions pending again and reopens their batch, in one database transaction;
 * returns how many. The caller then starts the batch's next run with `restart: true`.
 */
export async function reopenResubmittable(db: Warehouse, batchId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const reopened = await sql`
      update transactions set state = 'pending', last_error = null, updated_at = now()
      where batch_id = ${batchId}::uuid and state = 'failed' and last_error ~* ${RESUBMITTABLE_FAILURE}`.execute(trx);
    const count = Number(reopened.numAffectedRows ?? 0);
    if (count > 0)
      await sql`update submission_batches set status = 'open', finished_at = null where id = ${batchId}::uuid`.execute(
        trx,
      );
    return count;
  });
}
