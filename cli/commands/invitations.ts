import { parseFlags, UsageError } from '../usage.ts';
import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { ConflictError, NotImplementedError, ForbiddenError, NotFoundError, parseCustomDataJson, RequestValidationError } from '../../upstream/index.ts';
import { connectUpstream } from '../upstream.ts';

const MOVES = { accept: 'ACCEPTED', reject: 'REJECTED', cancel: 'CANCELLED' } as const;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' }, 'custom-data': { type: 'string' } }, true);
  const [sub, id, ...extra] = positionals;
  if (sub !== 'list' && !(sub !== undefined && sub in MOVES)) throw new UsageError(sub === undefined ? 'a subcommand is required: list, accept, reject or cancel' : `unknown subcommand "${sub}": expected list, accept, reject or cancel`);
  if (sub !== 'list' && !id) throw new UsageError(`${sub} needs an invitation ID (see ddsync invitations list)`);
  if (extra.length > 0 || (sub === 'list' && id)) throw new UsageError(`unexpected argument "${sub === 'list' ? id : extra[0]}"`);
  let customData;
  if (values['custom-data'] !== undefined) {
    try {
      customData = parseCustomDataJson(values['custom-data'], '--custom-data');
    } catch (error) {
      if (error instanceof RequestValidationError) throw new UsageError(error.message);
      throw error;
    }
  }
  const config = loadConfig(['upstream', 'logging']);
  const api = await connectUpstream(config.upstream!, createLogger({ level: config.logging!.level, format: config.logging!.format }));
  if (sub === 'list') {
    const invitations = await api.listBusinessInvitations();
    if (values.json) process.stdout.write(`${JSON.stringify(invitations)}\n`);
    else {
      for (const i of invitations) process.stdout.write(`${i.id}  ${String(i.status ?? '?').padEnd(9)} ${i.email ?? ''}  from ${i.sentByUser?.business?.name ?? i.sentByUser?.businessId ?? '?'}  ${i.createdAt ?? ''}\n`);
      if (invitations.length === 0) process.stdout.write('no invitations\n');
    }
    return 0;
  }
  const status = MOVES[sub as keyof typeof MOVES];
  try {
    const updated = await api.updateBusinessInvitation(id!, { status, ...(customData ? { customData } : {}) });
    process.stdout.write(values.json ? `${JSON.stringify(updated)}\n` : `invitation ${updated.id} is now ${updated.status}\n`);
    return 0;
  } catch (error) {
    const explained = explain(error, sub!, id!);
    if (!explained) throw error;
    process.stderr.write(`ddsync invitations: ${explained}\n`);
    return 1;
  }
}

function explain(error: unknown, move: string, id: string): string | undefined {
  const service = error instanceof Error && 'serviceMessage' in error && (error as { serviceMessage?: string }).serviceMessage ? ` (the service said: ${(error as { serviceMessage?: string }).serviceMessage})` : '';
  if (error instanceof ConflictError) return `cannot ${move} ${id}: the two businesses are already connected, so there is nothing to accept${service}`;
  if (error instanceof NotImplementedError) return `invitations are not enabled on this environment of the service: nothing can be ${move}ed here${service}`;
  if (error instanceof NotFoundError) return `no invitation ${id} at the service${service}`;
  if (error instanceof ForbiddenError) return `the business may not ${move} invitation ${id}: only the invited business accepts or rejects, only the sender cancels${service}`;
  return undefined;
}
