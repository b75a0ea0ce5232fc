import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { UsageError } from '../usage.ts';
import { loadConfig } from '../../platform/config.ts';
import { connectClient } from '../../infra/temporal-connection.ts';
import { connectWarehouse } from '../../infra/warehouse-connection.ts';
import { migrateToLatest } from '../../warehouse/migrate.ts';
import { IdCollector, type IdList } from '../../domain/pdfs/ids.ts';
import {
  enqueueSurveyPdfs,
  pdfArchiveStatus,
  type EnqueueResult,
  type PdfArchiveStatus,
} from '../../warehouse/pdfs/queue.ts';
import { archiveSurveyPdfs, pdfArchiveWorkflowId, type ArchivePdfsResult } from '../../workflows/archive-pdfs.ts';

/** Ids per statement: any file size works, in bounded memory per round trip. */
const ENQUEUE_CHUNK = 10_000;

/** `ddsync pdfs add ID...` or `add --file F`. */
export async function add(args: string[], { file, json }: { file?: string; json?: boolean }): Promise<number> {
  if (file !== undefined && args.length > 0) throw new UsageError('give ids as arguments or with --file F, not both');
  if (file === undefined && args.length === 0)
    throw new UsageError('add needs survey response ids (UUIDs), or --file F with one id per line');
  const collector = new IdCollector();
  if (file === undefined) for (const [i, text] of args.entries()) collector.add(text, i + 1);
  else {
    try {
      await readLines(file === '-' ? process.stdin : createReadStream(resolve(file)), (line, n) =>
        collector.addLine(line, n),
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'EISDIR')
        throw error;
      process.stderr.write(`ddsync pdfs: cannot read ${file}: ${(error as Error).message}\nnothing was queued.\n`);
      return 1;
    }
  }
  const list = collector.result();
  const where = (line: number) => (file === undefined ? `argument ${line}` : `line ${line}`);
  const config = loadConfig(['database']);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-pdfs');
  let results: EnqueueResult[] = [];
  try {
    await migrateToLatest(db);
    for (let i = 0; i < list.ids.length; i += ENQUEUE_CHUNK)
      results = results.concat(await enqueueSurveyPdfs(db, list.ids.slice(i, i + ENQUEUE_CHUNK)));
  } finally {
    await db.destroy();
  }
  const report = addReport(list, results, where);
  if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else {
    for (const bad of report.invalid) process.stderr.write(`${bad.where}: ${bad.error}\n`);
    const unchanged = Object.entries(report.unchangedByState)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ');
    process.stdout.write(
      `queued ${report.queued}, queued again (was gone) ${report.requeued}, already known ${report.unchanged}${unchanged ? ` (${unchanged})` : ''}` +
        `${report.repeated ? `, repeated ${report.repeated}` : ''}, invalid ${report.invalid.length}\n`,
    );
  }
  return report.invalid.length > 0 ? 1 : 0;
}

function addReport(list: IdList, results: EnqueueResult[], where: (line: number) => string) {
  const unchangedByState: Record<string, number> = {};
  for (const r of results)
    if (r.outcome === 'unchanged') unchangedByState[r.state] = (unchangedByState[r.state] ?? 0) + 1;
  return {
    queued: results.filter((r) => r.outcome === 'queued').length,
    requeued: results.filter((r) => r.outcome === 'requeued').length,
    unchanged: results.filter((r) => r.outcome === 'unchanged').length,
    unchangedByState,
    repeated: list.repeated,
    invalid: list.invalid.map((bad) => ({ where: where(bad.line), line: bad.line, text: bad.text, error: bad.error })),
  };
}

async function readLines(input: Readable, onLine: (line: string, n: number) => void): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  // An unreadable file fails the stream before the first line: surface that, not an empty list.
  let failure: unknown;
  input.once('error', (error) => {
    failure = error;
    lines.close();
  });
  let n = 0;
  for await (const line of lines) onLine(line, ++n);
  if (failure) throw failure;
}

export async function status({ json }: { json?: boolean }): Promise<number> {
  const config = loadConfig(['database', 'pdfs']);
  const archiveDir = resolve(config.pdfs!.archiveDir);
  const db = await connectWarehouse(config.database!, 2, 'ddsync-pdfs');
  let s: PdfArchiveStatus;
  try {
    s = await pdfArchiveStatus(db);
  } finally {
    await db.destroy();
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ archiveDir, ...s })}\n`);
    return 0;
  }
  const states = Object.entries(s.states)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  const lines = [
    `survey-response PDFs: ${s.total} (${states})`,
    `archived ${s.states.archived} (${formatBytes(s.archivedBytes)}), stored as ${s.storedFiles} file${s.storedFiles === 1 ? '' : 's'} (${formatBytes(s.storedBytes)}) in ${archiveDir}`,
  ];
  if (s.oldestWaitingSince)
    lines.push(`oldest waiting (not COMPLETED yet) since ${s.oldestWaitingSince.toISOString()}`);
  if (s.nextAttemptAt) lines.push(`next attempt due ${s.nextAttemptAt.toISOString()}`);
  if (s.problems.length > 0) {
    lines.push('recent problems:');
    for (const p of s.problems) {
      lines.push(
        `  ${p.id}  ${p.state.padEnd(8)} ${String(p.lastStatus ?? '-').padEnd(3)}  ${p.attempts} attempt${p.attempts === 1 ? '' : 's'}` +
          `${p.nextAttemptAt ? `  next ${p.nextAttemptAt.toISOString()}` : ''}  ${p.lastError ?? ''}`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

export async function archive({ wait, json }: { wait?: boolean; json?: boolean }): Promise<number> {
  const config = loadConfig(['temporal']);
  const client = await connectClient(config.temporal!);
  try {
    const workflowId = pdfArchiveWorkflowId(randomUUID());
    const handle = await client.workflow.start(archiveSurveyPdfs, {
      taskQueue: config.temporal!.taskQueue,
      workflowId,
      args: [{}],
    });
    if (!wait) {
      process.stdout.write(
        json
          ? `${JSON.stringify({ workflowId })}\n`
          : `PDF archive started (workflow ${workflowId}); see ddsync pdfs status\n`,
      );
      return 0;
    }
    if (!json) process.stderr.write(`PDF archive started (workflow ${workflowId}); waiting for it to end…\n`);
    const result: ArchivePdfsResult = await handle.result();
    process.stdout.write(
      json
        ? `${JSON.stringify({ workflowId, ...result })}\n`
        : `archived ${result.archived} (new files ${result.stored}, already stored ${result.deduplicated}), waiting for COMPLETED ${result.waiting}, gone ${result.gone}, failed ${result.failed}` +
            `${result.skipped ? `, skipped (another run's) ${result.skipped}` : ''}\n`,
    );
    return result.failed > 0 ? 1 : 0;
  } finally {
    await client.connection.close();
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
