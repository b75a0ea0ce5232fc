import { UsageError } from '../usage.ts';
import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import {
  ConflictError,
  NotImplementedError,
  ForbiddenError,
  NotFoundError,
  parseCustomDataJson,
  RequestValidationError,
  type CustomDataInput,
} from '../../upstream/index.ts';
import { connectUpstream } from '../upstream.ts';

const MOVES = { accept: 'ACCEPTED', reject: 'REJECTED', cancel: 'CANCELLED' } as const;

/** `id` comes with the moves (accept, reject, cancel) only. */
export async function run(
  sub: 'list' | keyof typeof MOVES,
  id: string | undefined,
  values: { json?: boolean; customData?: string },
): Promise<number> {
  let customData: CustomDataInput | undefined;
  if (values.customData !== undefined) {
    try {
      customData = parseCustomDataJson(values.customData, '--custom-data');
    } catch (error) {
      if (error instanceof RequestValidationError) throw new UsageError(error.message);
      throw error;
    }
  }
  const config = loadConfig(['upstream', 'logging']);
  const api = await connectUpstream(
    config.upstream!,
    createLogger({ level: config.logging!.level, format: config.logging!.format }),
  );
  if (sub === 'list') {
    const invitations = await api.listBusinessInvitations();
    if (values.json) process.stdout.write(`${JSON.stringify(invitations)}\n`);
    else {
      for (const i of invitations)
        process.stdout.write(
          `${i.id}  ${String(i.status ?? '?').padEnd(9)} ${i.email ?? ''}  from ${i.sentByUser?.business?.name ?? i.sentByUser?.businessId ?? '?'}  ${i.createdAt ?? ''}\n`,
        );
      if (invitations.length === 0) process.stdout.write('no invitations\n');
    }
    return 0;
  }
  const status = MOVES[sub];
  try {
    const updated = await api.updateBusinessInvitation(id!, { status, ...(customData ? { customData } : {}) });
    process.stdout.write(
      values.json ? `${JSON.stringify(updated)}\n` : `invitation ${updated.id} is now ${updated.status}\n`,
    );
    return 0;
  } catch (error) {
    const explained = explain(error, sub, id!);
    if (!explained) throw error;
    process.stderr.write(`ddsync invitations: ${explained}\n`);
    return 1;
  }
}

function explain(error: unknown, move: string, id: string): string | undefined {
  const service =
    error instanceof Error && 'serviceMessage' in error && (error as { serviceMessage?: string }).serviceMessage
      ? ` (the service said: ${(error as { serviceMessage?: string }).serviceMessage})`
      : '';
  if (error instanceof ConflictError)
    return `cannot ${move} ${id}: the two businesses are already connected, so there is nothing to accept${service}`;
  if (error instanceof NotImplementedError)
    return `invitations are not enabled on this environment of the service: nothing can be ${move}ed here${service}`;
  if (error instanceof NotFoundError) return `no invitation ${id} at the service${service}`;
  if (error instanceof ForbiddenError)
    return `the business may not ${move} invitation ${id}: only the invited business accepts or rejects, only the sender cancels${service}`;
  return undefined;
}
