import { Context } from '@temporalio/activity';
import { type ClientStats, type UpstreamClient, UpstreamError } from '../../upstream/index.ts';
import type { Warehouse } from '../../warehouse/database.ts';
import type { RequestCounts } from '../../warehouse/refresh/page-ledger.ts';
import { noteScopeError } from '../../warehouse/refresh/run-ledger.ts';

/** What the refresh's activities share: the service's calls, request counts, the activity's cancellation, failed parts. */

/** The service's calls a refresh makes. */
export type RefreshApi = Pick<
  UpstreamClient,
  'listSuppliers' | 'listBuyers' | 'listBusinessInvitations' | 'getSupplierPlotsPageText' | 'ownPlots'
>;

export function requestCounts(stats: ClientStats): RequestCounts {
  return { requests: stats.requests, retries: stats.retries, rateLimited: stats.rateLimited };
}

export function cancellation(): AbortSignal {
  return Context.current().cancellationSignal;
}

/** A non-retryable upstream answer ends a part of the run as failed, with the service's message. */
export function isFinal(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && !error.retryable;
}

/**
 * A retryable failure of a part (the service away, the warehouse for a moment) is noted on its scope
 * before the attempt fails: if the last retry fails too, the run says why the part failed, not only
 * that it "did not finish". A part that later succeeds clears it. Returns the error to rethrow.
 */
export async function withReasonNoted(db: Warehouse, runId: string, scope: string, error: unknown): Promise<unknown> {
  if (error instanceof UpstreamError) await noteScopeError(db, runId, scope, error.message).catch(() => undefined);
  return error;
}
