// Where a refresh's wall time goes, read from Temporal's histories: for the workflow and each child
// (every run), when it started and ended, and each ordinary activity from scheduled to completed.
// Printed by `bench:refresh --timeline` for the no-change refresh, whose time is mostly waiting.
import type { Client, WorkflowHandle } from '@temporalio/client';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

const millis = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

export interface TimelineLine {
  workflowId: string;
  what: string;
  fromMs: number;
  toMs: number;
}

/** Lines of the workflow `workflowId` and its children, relative to the workflow's first event. */
export async function refreshTimeline(client: Client, workflowId: string): Promise<TimelineLine[]> {
  const lines: TimelineLine[] = [];
  let origin: number | undefined;
  const visit = async (id: string, runId?: string): Promise<void> => {
    const events = (await client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    if (events.length === 0) return;
    origin ??= millis(events[0]!);
    const at = (e: HistoryEvent) => millis(e) - origin!;
    const byId = new Map(events.map((e) => [Number(e.eventId), e]));
    const tasks = events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
    const markers = events.filter((e) => e.markerRecordedEventAttributes).length;
    lines.push({
      workflowId: id,
      what: `run (${tasks} workflow tasks, ${markers} local activities)`,
      fromMs: at(events[0]!),
      toMs: at(events[events.length - 1]!),
    });
    const children: Promise<void>[] = [];
    for (const e of events) {
      const done = e.activityTaskCompletedEventAttributes;
      if (done) {
        const scheduled = byId.get(Number(done.scheduledEventId))!;
        const name = scheduled.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        lines.push({ workflowId: id, what: `activity ${name}`, fromMs: at(scheduled), toMs: at(e) });
      }
      const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
      if (child?.workflowId) children.push(visit(child.workflowId, child.runId ?? undefined));
      const next = e.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      if (next) children.push(visit(id, next));
    }
    await Promise.all(children);
  };
  await visit(workflowId);
  return lines.sort((a, b) => a.fromMs - b.fromMs);
}

export function formatTimeline(lines: readonly TimelineLine[]): string {
  const short = (id: string) => id.replace(/^refresh\/[^/]+/, '').replace(/\/supplier\//, 'supplier ') || '(refresh)';
  return lines
    .map(
      (l) =>
        `${l.fromMs.toFixed(0).padStart(6)} → ${l.toMs.toFixed(0).padStart(6)} ms  ${(l.toMs - l.fromMs).toFixed(0).padStart(5)} ms  ${short(l.workflowId).slice(0, 40).padEnd(40)} ${l.what}`,
    )
    .join('\n');
}
