import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import {
  ddsyncEnv,
  runDdsync,
  startWorkerProcess,
  stopProcess,
  type RunningCommand,
  lastJsonLine,
} from '../support/processes.ts';

describe('ddsync pdfs', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  let dir: string;
  let completed: string[];
  let inProgress: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ddsync-cli-pdfs-'));
    sim = await startSimulator({ port: 0, suppliers: 2, plots: 20, seed: 62 });
    const responses = sim.control.surveyResponses();
    completed = responses.filter((r) => r.status === 'COMPLETED').map((r) => r.id);
    inProgress = responses.find((r) => r.status === 'IN_PROGRESS')!.id;
    env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl: await createTestDatabase('clipdfs'), taskQueue: `cli-pdfs-${randomUUID()}` },
      {
        DDSYNC_PDF_ARCHIVE_DIR: join(dir, 'archive'),
      },
    );
    worker = await startWorkerProcess(env);
  }, 120_000);
  afterAll(async () => {
    await stopProcess(worker);
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('queues ids from arguments, naming each invalid one with its position and the rule', async () => {
    const run = runDdsync(['pdfs', 'add', completed[0]!.toUpperCase(), 'not-an-id', completed[0]!], env);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('argument 2: "not-an-id" is not a survey response id: expected a UUID');
    expect(run.output()).toContain('queued 1, queued again (was gone) 0, already known 0, repeated 1, invalid 1');
  });

  it('queues ids from a file (comments and blank lines ignored) and says what was known already', async () => {
    const file = join(dir, 'ids.txt');
    await writeFile(
      file,
      `# survey responses to keep\n${completed[0]}\n\n${completed[1]}  # second\n${completed[2]}\n${inProgress}\n`,
    );
    const run = runDdsync(['pdfs', 'add', '--file', file, '--json'], env);
    expect(await run.exited).toBe(0);
    expect(lastJsonLine(run.output())).toEqual({
      queued: 3,
      requeued: 0,
      unchanged: 1,
      unchangedByState: { queued: 1 },
      repeated: 0,
      invalid: [],
    });

    const missing = runDdsync(['pdfs', 'add', '--file', join(dir, 'missing.txt')], env);
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toMatch(/cannot read .*missing\.txt.*\nnothing was queued/);
  });

  it("archives on the worker and reports the archive's state", async () => {
    const archive = runDdsync(['pdfs', 'archive', '--wait', '--json'], env);
    expect(await archive.exited).toBe(0);
    expect(lastJsonLine(archive.output())).toMatchObject({
      archived: 3,
      stored: 3,
      deduplicated: 0,
      waiting: 1,
      gone: 0,
      failed: 0,
    });
    const files = (await readdir(join(dir, 'archive'), { recursive: true })).filter((f) => f.endsWith('.pdf'));
    expect(files).toHaveLength(3);

    const status = runDdsync(['pdfs', 'status', '--json'], env);
    expect(await status.exited).toBe(0);
    const s = lastJsonLine(status.output());
    expect(s).toMatchObject({
      archiveDir: join(dir, 'archive'),
      total: 4,
      storedFiles: 3,
      states: { queued: 0, waiting: 1, retrying: 0, archived: 3, gone: 0 },
    });
    expect(s['problems']).toEqual([
      expect.objectContaining({ id: inProgress, state: 'waiting', lastStatus: 422, attempts: 1 }),
    ]);

    const human = runDdsync(['pdfs', 'status'], env);
    expect(await human.exited).toBe(0);
    expect(human.output()).toContain('survey-response PDFs: 4 (queued 0, waiting 1, retrying 0, archived 3, gone 0)');
    expect(human.output()).toMatch(new RegExp(`${inProgress} +waiting +422 +1 attempt`));
  });

  it('explains misuse with exit code 2', async () => {
    for (const args of [['pdfs'], ['pdfs', 'remove', 'x'], ['pdfs', 'status', '--wait'], ['pdfs', 'add']]) {
      const run = runDdsync(args, env);
      expect(await run.exited).toBe(2);
    }
  });
});
