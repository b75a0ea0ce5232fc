import type { Client } from '@temporalio/client';
import type { Warehouse } from '../warehouse/database.ts';
import { takeInShipments, type IntakeSummary } from '../warehouse/submission/intake.ts';
import { batchReferences, type BatchReport } from '../warehouse/submission/batch-report.ts';
import { packagePath } from '../platform/package-root.ts';
import { submitBatch, submitBatchWorkflowId } from '../workflows/submit-batch.ts';
import type { TransactionTiming } from '../workflows/submit-transaction.ts';
import { followBatch } from './submission-runner.ts';
import { fmt } from './progress.ts';
import { openReadinessGate } from '../warehouse/submission/readiness-gate.ts';
import { readinessLine } from './submission-summary.ts';

/**
 * The demo's readiness gate warns, as `ddsync submit` does by default: every supplier of the simulator
 * has plots that are not ready (deforestation detected, odd geometries), so `block` would refuse every
 * row that names a supplier, and the demo would show no DDS reference at all.
 */
const DEMO_READINESS = 'warn' as const;
/** The demo's data is minutes old: a day is far from stale. */
const DEMO_MAX_DATA_AGE_MS = 86_400_000;

/**
 * The demo's second job: a sample file of shipments (a few rows break a rule) submitted durably and
 * followed to the EU system's answer on the simulator's sped-up clock.
 */

/** Shipped with the project: 12 shipments to the demo's first two suppliers, 3 of them refused by a rule. */
export const DEMO_SHIPMENTS = packagePath('examples', 'shipments.ndjson');

/** The production waits (first poll 1 m, at most 1 h between polls, 30 m EU wait, 2 m create settle), on the simulator's clock. */
export function demoTiming(timeScale: number): TransactionTiming {
  const scaled = (ms: number, floorMs: number) => Math.max(floorMs, Math.round(ms * timeScale));
  return {
    firstPollMs: scaled(60_000, 10),
    maxPollMs: scaled(3_600_000, 100),
    euWaitMs: scaled(1_800_000, 10),
    createSettleMs: scaled(120_000, 1_000),
    deadlineMs: scaled(7 * 86_400_000, 600_000),
  };
}

/** The same waits as DDSYNC_TX_* settings, for `ddsync submit` against a demo left running. */
export function timingEnv(t: TransactionTiming): string {
  return `DDSYNC_TX_FIRST_POLL=${t.firstPollMs}ms DDSYNC_TX_MAX_POLL=${t.maxPollMs}ms DDSYNC_TX_EU_WAIT=${t.euWaitMs}ms DDSYNC_TX_CREATE_SETTLE=${t.createSettleMs}ms`;
}

export interface DemoSubmission {
  intake: IntakeSummary;
  report: BatchReport;
  references: Array<{ key: string; referenceNumber: string; verificationNumber: string }>;
}

export async function runDemoSubmission(
  db: Warehouse,
  client: Client,
  o: { taskQueue: string; timing: TransactionTiming; reportPath: string; progress: NodeJS.WriteStream | null },
): Promise<DemoSubmission> {
  const gate = await openReadinessGate(db, { policy: DEMO_READINESS, maxDataAgeMs: DEMO_MAX_DATA_AGE_MS });
  const intake = await takeInShipments(db, DEMO_SHIPMENTS, o.reportPath, gate);
  const handle = await client.workflow.start(submitBatch, {
    taskQueue: o.taskQueue,
    workflowId: submitBatchWorkflowId(intake.batchId),
    args: [{ batchId: intake.batchId, concurrency: 10, timing: o.timing }],
  });
  const report = await followBatch(db, handle, intake.batchId, o.progress);
  return { intake, report, references: await batchReferences(db, intake.batchId) };
}

export function formatDemoSubmission(s: DemoSubmission): string {
  const lines = [
    `shipments: ${fmt(s.intake.rows)} rows of examples/shipments.ndjson, ${fmt(s.intake.accepted)} sent, ${fmt(s.intake.invalid)} refused before sending:`,
  ];
  for (const r of s.intake.samples)
    lines.push(
      `  line ${r.line}${r.key ? ` (${r.key})` : ''}: ${r.errors.map((e) => `${e.field}: ${e.rule}`).join('; ')}`,
    );
  const gate = readinessLine(s.intake);
  if (gate) lines.push(`  ${gate}; --readiness block would have refused them`);
  lines.push(`  ${fmt(s.references.length)} with a DDS reference (reference / verification number):`);
  for (const r of s.references) lines.push(`    ${r.key.padEnd(16)} ${r.referenceNumber} / ${r.verificationNumber}`);
  for (const p of s.report.problems)
    lines.push(`  ${p.state}: ${fmt(p.transactions)} × ${p.reason} (${p.keys.join(', ')})`);
  return lines.join('\n');
}
