import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulator, type Simulator } from '../../simulator/index.ts';
import { createTestDatabase } from '../support/databases.ts';
import {
  DDSYNC_BIN,
  ddsyncEnv,
  runDdsync,
  startWorkerProcess,
  stopProcess,
  type RunningCommand,
  lastJsonLine,
} from '../support/processes.ts';
import { scratchDir } from '../support/scratch.ts';
import { shipmentRow, writeShipments } from '../support/shipments.ts';
import { waitUntil } from '../support/wait.ts';
import { openWarehouse } from '../../warehouse/database.ts';
import { takeInShipments } from '../../warehouse/submission/intake.ts';
import { sql } from 'kysely';

describe('ddsync submit and submissions', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  let worker: RunningCommand;
  const run = randomUUID().slice(0, 8);

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, suppliers: 2, plots: 50, timeScale: 0.001, transactionErrorRatio: 0 });
    env = ddsyncEnv(
      { upstreamUrl: sim.url, databaseUrl: await createTestDatabase('clisubmit'), taskQueue: `cli-submit-${run}` },
      {
        DDSYNC_TX_FIRST_POLL: '100ms',
        DDSYNC_TX_MAX_POLL: '1s',
        DDSYNC_TX_EU_WAIT: '1800ms',
        DDSYNC_TX_DEADLINE: '2m',
        DDSYNC_TX_CREATE_SETTLE: '300ms',
      },
    );
    worker = await startWorkerProcess(env);
  }, 120_000);
  afterAll(async () => {
    await stopProcess(worker);
    await sim?.close();
  });

  it('submit --wait follows a file to DDS references and says which rows were refused (exit code 1)', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const path = writeShipments([
      shipmentRow(`cli-a-${run}`, supplier),
      shipmentRow(`cli-b-${run}`, supplier),
      shipmentRow(`cli-c-${run}`, supplier, { activityType: 'BUY' }),
    ]);
    const submit = runDdsync(['submit', path, '--wait', '--json'], env);
    expect(await submit.exited).toBe(1);
    const out = lastJsonLine(submit.output()) as {
      batchId: string;
      accepted: number;
      invalid: number;
      report: { states: Record<string, number>; invalid: number };
    };
    expect(out).toMatchObject({ accepted: 2, invalid: 1 });
    expect(out.report.states).toEqual({ available: 2 });

    const status = runDdsync(['submissions', 'status', out.batchId], env);
    expect(await status.exited).toBe(1);
    expect(status.output()).toMatch(/2\/2 ended .* available 2 {2}error 0/);
    const list = runDdsync(['submissions', 'list'], env);
    expect(await list.exited).toBe(0);
    expect(list.output()).toContain(out.batchId);
  }, 120_000);

  it('submissions status --wait follows a running batch to its end: what a follower that lost Temporal says to run', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = [`cli-w1-${run}`, `cli-w2-${run}`];
    const submit = runDdsync(['submit', writeShipments(keys.map((k) => shipmentRow(k, supplier)))], env);
    expect(await submit.exited, submit.output()).toBe(0);
    const started = /batch (\S+) started .*; follow it with: ddsync submissions status \1 --wait$/m.exec(
      submit.output(),
    );
    expect(started, submit.output()).not.toBeNull();
    const follow = runDdsync(['submissions', 'status', started![1]!, '--wait'], env);
    expect(await follow.exited, follow.output()).toBe(0);
    // It printed the batch as ended, not as it stood when asked.
    expect(follow.output()).toMatch(/^batch \S+ \(.+\) done at /m);
    expect(follow.output()).toMatch(/2\/2 ended .* available 2 {2}error 0/);
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual([1, 1]);
  }, 120_000);

  it('running the same file again finishes a batch whose command died before starting it', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = [`cli-r1-${run}`, `cli-r2-${run}`];
    const path = writeShipments(keys.map((key) => shipmentRow(key, supplier)));
    // `ddsync submit` killed after taking the file in, before starting the batch's workflow.
    const db = openWarehouse(env.DATABASE_URL!, 1);
    let stranded: string;
    try {
      stranded = (await takeInShipments(db, path, `${path}.report.ndjson`)).batchId;
    } finally {
      await db.destroy();
    }
    const again = runDdsync(['submit', path, '--json'], env);
    expect(await again.exited).toBe(0);
    expect(lastJsonLine(again.output())).toMatchObject({ accepted: 0, duplicates: 2, resumed: [stranded] });
    await waitUntil(
      'the resumed batch to end',
      async () => {
        const status = runDdsync(['submissions', 'status', stranded, '--json'], env);
        await status.exited;
        return (lastJsonLine(status.output()) as { states?: Record<string, number> }).states?.['available'] === 2;
      },
      60_000,
      500,
    );
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual([1, 1]);
  }, 120_000);

  it('keeps a file taken in when Temporal cannot be reached, says what to do, and the same command then finishes it', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = [`cli-t1-${run}`, `cli-t2-${run}`];
    const path = writeShipments(keys.map((key) => shipmentRow(key, supplier)));
    // Nothing listens on port 9 of the loopback.
    const away = runDdsync(['submit', path], { ...env, TEMPORAL_ADDRESS: '127.0.0.1:9' });
    expect(await away.exited).toBe(1);
    const said = away.output();
    expect(said).toMatch(/cannot reach Temporal at 127\.0\.0\.1:9/);
    const kept =
      /batch ([0-9a-f-]{36}) is kept with its 2 row\(s\) and nothing was sent: run the same command again once Temporal answers/.exec(
        said,
      );
    expect(kept, said).not.toBeNull();
    expect(keys.map((k) => sim.control.transactionCountsByCustomId()[k] ?? 0)).toEqual([0, 0]);

    const again = runDdsync(['submit', path, '--json'], env);
    expect(await again.exited).toBe(0);
    expect(lastJsonLine(again.output())).toMatchObject({ accepted: 0, duplicates: 2, resumed: [kept![1]] });
    await waitUntil(
      'the kept batch to end',
      () => keys.every((k) => sim.control.transactionCountsByCustomId()[k] === 1),
      60_000,
      250,
    );
  }, 120_000);

  it('submit --wait says at once which step keeps failing, and finishes once its cause is gone', async () => {
    const key = `cli-fault-${run}`;
    const path = writeShipments([shipmentRow(key, sim.control.suppliers()[0]!.id)]);
    // A permanent fault in the warehouse: no status of this key may be recorded.
    const db = openWarehouse(env.DATABASE_URL!, 1);
    const fault = `cli_fault_${run}`;
    await sql
      .raw(`create function ${fault}() returns trigger language plpgsql as $$ begin raise exception 'test fault in the warehouse'; end $$;
      create trigger ${fault} before insert on transaction_status_events for each row when (new.transaction_key = '${key}') execute function ${fault}()`)
      .execute(db);
    try {
      const submit = runDdsync(['submit', path, '--wait'], env);
      await submit.waitFor(
        new RegExp(
          `retrying: createAndSubmitTransaction: test fault in the warehouse \\(e\\.g\\. ${key}\\); see ddsync submissions status [0-9a-f-]{36}\\n`,
        ),
      );
      expect(submit.child.exitCode).toBeNull();
      await sql.raw(`drop trigger ${fault} on transaction_status_events; drop function ${fault}()`).execute(db);
      expect(await submit.exited).toBe(0);
      const summary = submit.output().slice(submit.output().lastIndexOf('\nbatch '));
      expect(summary).toMatch(/ done at .*\n.*\n {2}1\/1 ended .* available 1 /);
      expect(summary).not.toContain('retrying');
    } finally {
      await sql
        .raw(`drop trigger if exists ${fault} on transaction_status_events; drop function if exists ${fault}()`)
        .execute(db);
      await db.destroy();
    }
    // The worker's log has the error itself, with the key, not only that an activity failed.
    const failed = worker
      .output()
      .split('\n')
      .filter((l) => l.includes('"createAndSubmitTransaction failed; retried"') && l.includes(`"key":"${key}"`))
      .map((l) => JSON.parse(l) as { level: number; err?: { message?: string } });
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]).toMatchObject({ level: 40, err: { message: 'test fault in the warehouse' } });
  }, 120_000);

  it('closes a batch with nothing to send at once and says why: exit code 0 unless a row was refused', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const path = writeShipments([`cli-dup-a-${run}`, `cli-dup-b-${run}`].map((key) => shipmentRow(key, supplier)));
    const first = runDdsync(['submit', path, '--wait', '--json'], env);
    expect(await first.exited).toBe(0);
    const earlier = (lastJsonLine(first.output()) as { batchId: string }).batchId;

    const again = runDdsync(['submit', path], env);
    expect(await again.exited).toBe(0);
    const batchId = /^nothing to send: .* \(batch ([0-9a-f-]{36}) done\)$/m.exec(again.output())?.[1];
    expect(again.output()).toContain(`nothing to send: 2 rows already submitted in batch ${earlier}`);
    const status = runDdsync(['submissions', 'status', batchId!], env);
    expect(await status.exited).toBe(0);
    expect(status.output()).toMatch(new RegExp(`^batch ${batchId} \\(shipments.ndjson\\) done at `, 'm'));
    expect(status.output()).toContain(`  nothing to send: 2 rows already submitted in batch ${earlier}`);
    const json = runDdsync(['submissions', 'status', batchId!, '--json'], env);
    expect(await json.exited).toBe(0);
    expect(lastJsonLine(json.output())).toMatchObject({
      status: 'done',
      finishedAt: expect.any(String),
      accepted: 0,
      duplicates: 2,
    });

    // Every row refused: nothing to send either, closed as well, and the exit code says rows were refused.
    const refused = runDdsync(
      ['submit', writeShipments([shipmentRow(`cli-bad-${run}`, supplier, { activityType: 'BUY' })]), '--json'],
      env,
    );
    expect(await refused.exited).toBe(1);
    const refusedBatch = (lastJsonLine(refused.output()) as { batchId: string }).batchId;
    const refusedStatus = runDdsync(['submissions', 'status', refusedBatch], env);
    expect(await refusedStatus.exited).toBe(1);
    expect(refusedStatus.output()).toMatch(/ done at .*\n.*\n {2}nothing to send: 1 row invalid$/m);
  }, 120_000);

  it('submissions retry sends again, under their keys, the transactions a 401 ended as failed, and only once', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const keys = [`cli-401a-${run}`, `cli-401b-${run}`];
    const path = writeShipments(keys.map((key) => shipmentRow(key, supplier)));
    // A batch as an earlier ddsync left it: ended, both transactions failed on a 401.
    const db = openWarehouse(env.DATABASE_URL!, 1);
    let batchId: string;
    try {
      batchId = (await takeInShipments(db, path, `${path}.report.ndjson`)).batchId;
      await sql`update transactions set state = 'failed', last_error = 'POST /transactions: 401 unauthorized (token or client credentials rejected): Unauthorized' where batch_id = ${batchId}::uuid`.execute(
        db,
      );
      await sql`update submission_batches set status = 'done', finished_at = now() where id = ${batchId}::uuid`.execute(
        db,
      );
    } finally {
      await db.destroy();
    }
    const status = runDdsync(['submissions', 'status', batchId], env);
    expect(await status.exited).toBe(1);
    expect(status.output()).toContain(
      `2 failed without the service refusing them (e.g. ${keys[0]}, ${keys[1]}): ddsync submissions retry ${batchId} sends them again`,
    );
    const retry = runDdsync(['submissions', 'retry', batchId, '--wait', '--json'], env);
    expect(await retry.exited).toBe(0);
    expect(lastJsonLine(retry.output())).toMatchObject({
      batchId,
      reopened: 2,
      started: true,
      report: { status: 'done', states: { available: 2 } },
    });
    const counts = sim.control.transactionCountsByCustomId();
    expect(keys.map((k) => counts[k])).toEqual([1, 1]);

    const again = runDdsync(['submissions', 'retry', batchId], env);
    expect(await again.exited).toBe(0);
    expect(again.output()).toContain(`batch ${batchId}: nothing to send again`);
  }, 120_000);

  it('submissions retry refuses a cancelled batch and --wait elsewhere', async () => {
    const db = openWarehouse(env.DATABASE_URL!, 1);
    let batchId: string;
    try {
      batchId = (
        await takeInShipments(
          db,
          writeShipments([shipmentRow(`cli-cancelled-${run}`, sim.control.suppliers()[0]!.id)]),
          '/dev/null',
        )
      ).batchId;
      await sql`update submission_batches set status = 'cancelled' where id = ${batchId}::uuid`.execute(db);
    } finally {
      await db.destroy();
    }
    const retry = runDdsync(['submissions', 'retry', batchId], env);
    expect(await retry.exited).toBe(1);
    expect(retry.output()).toContain(`ddsync submissions: batch ${batchId} was cancelled: nothing more is sent for it`);
    const misplaced = runDdsync(['submissions', 'cancel', batchId, '--wait'], env);
    expect(await misplaced.exited).toBe(2);
    expect(misplaced.output()).toContain('--wait goes with status or retry only');
  });

  it('prints the line, field and rule of refused rows and sends nothing from a broken JSON array', async () => {
    const path = writeShipments(['{"key": "x", "activityType": "IMPORT"'], 'json-array');
    const submit = runDdsync(['submit', path], env);
    expect(await submit.exited).toBe(1);
    expect(submit.output()).toMatch(/the JSON array breaks off after item 0/);
    expect(submit.output()).toContain('nothing was sent');
  });

  it('sends every byte of a hostile file as written or refuses the row with its line, field and rule, escaped', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const a = `cli-h-a-${run}`;
    const b = `cli-h-b-${run}`;
    // Text that must arrive as written: escapes, U+FFFD and an emoji in the bytes, separators, bidi.
    const odd = 'cocoa \u001b[31m beans \uFFFD 😀 \u2028 \u202e end';
    const rowA = shipmentRow(a, supplier, {
      customData: { po: odd, n: 1.5 },
      components: [
        {
          hsn: '18010000',
          quantity: 1250.25,
          unit: 'KGM',
          description: odd,
          supplierBusinessId: supplier,
          namePairs: [{ commonName: 'cocoa', scientificName: 'Theobroma cacao' }],
        },
      ],
    });
    const line = (row: Record<string, unknown>) => Buffer.from(`${JSON.stringify(row)}\n`);
    const component = (extra: Record<string, unknown>) => [
      { hsn: '18010000', quantity: 1, unit: 'KGM', supplierBusinessId: supplier, ...extra },
    ];
    const nested = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const file = Buffer.concat([
      line(rowA),
      // 2: bytes that are not UTF-8 in the key
      Buffer.from(`{"key":"cli-h-u8-${run}-`),
      Buffer.from([0xff, 0xfe, 0xfd]),
      Buffer.from(
        `","activityType":"IMPORT","countryOfActivity":"NL","components":${JSON.stringify(component({}))}}\n`,
      ),
      // 3, 4: unknown members in a name pair and a DDS reference
      line(
        shipmentRow(`cli-h-np-${run}`, supplier, {
          components: component({ namePairs: [{ commonName: 'c', scientificName: 's', x: 1 }] }),
        }),
      ),
      line(
        shipmentRow(`cli-h-dds-${run}`, supplier, {
          components: [
            {
              hsn: '1801',
              quantity: 3,
              unit: 'TNE',
              ddsReferences: [{ id: '24DKYIGLPU3439', verificationNumber: '4NAB3QYM', note: 'x' }],
            },
          ],
        }),
      ),
      // 5: 10,000 levels inside a name pair
      Buffer.from(
        `${JSON.stringify(shipmentRow(`cli-h-deep-${run}`, supplier, { components: component({ namePairs: [{ commonName: 'c', scientificName: 's', x: '#' }] }) })).replace('"#"', nested)}\n`,
      ),
      // 6: NUL in a text
      line(shipmentRow(`cli-h-nul-${run}`, supplier, { components: component({ description: 'a\u0000b' }) })),
      // 7: terminal controls in a refused row (C0 escaped in the JSON, C1 raw)
      line(shipmentRow(`cli-h-\u009b2J-${run}`, supplier, { activityType: 'BUY\u001b]0;pwned\u0007' })),
      // 8: a member given twice
      Buffer.from(`{"key":"cli-h-dup-${run}",${JSON.stringify(shipmentRow(`cli-h-dup2-${run}`, supplier)).slice(1)}\n`),
      line(shipmentRow(b, supplier)),
    ]);
    const dir = scratchDir('hostile');
    const path = join(dir, 'hostile.ndjson');
    writeFileSync(path, file);

    const submit = runDdsync(['submit', path, '--wait'], env);
    expect(await submit.exited).toBe(1);
    const out = submit.output();
    expect(out).toContain('9 rows read: 2 accepted, 7 invalid, 0 already submitted earlier (not sent again)');
    expect(out).toContain(
      '  line 2: key: bytes that are not UTF-8 (0xFF 0xFE 0xFD at byte 27 of the line): a shipments file must be UTF-8 text',
    );
    expect(out).toContain(
      `  line 3 (cli-h-np-${run}): components[0].namePairs[0].x: unknown field (expected one of commonName, scientificName)`,
    );
    expect(out).toContain(
      `  line 4 (cli-h-dds-${run}): components[0].ddsReferences[0].note: unknown field (expected one of id, verificationNumber)`,
    );
    expect(out).toContain(
      `  line 5 (cli-h-deep-${run}): components[0].namePairs[0].x: nested deeper than 64 levels (a shipment row needs 5); components[0].namePairs[0].x: unknown field`,
    );
    expect(out).toContain(
      `  line 6 (cli-h-nul-${run}): components[0].description: holds \\u0000 (NUL): a text cannot hold it`,
    );
    expect(out).toContain(
      `  line 7 (cli-h-\\u009b2J-${run}): key: must not contain control characters; activityType: one of IMPORT, EXPORT, TRADE, DOMESTIC, got "BUY\\u001b]0;pwned\\u0007"`,
    );
    expect(out).toContain(
      `  line 8 (cli-h-dup2-${run}): key: given twice in one object: only one could be sent; keep one`,
    );
    // Nothing of the file reaches the terminal raw: no control character but the line ends.
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\u2028]/);
    expect(out).toMatch(/ done at .*\n.*\n {2}2\/2 ended .* available 2 /);

    // What the service got is what the file says, for the two rows sent, and nothing else of the file.
    const sent = sim.control.transactions().filter((t) => t.customId.startsWith(`cli-h-`) && t.customId.endsWith(run));
    expect(sent.map((t) => t.customId).sort()).toEqual([a, b]);
    const txA = sent.find((t) => t.customId === a)!;
    expect(txA.customData).toEqual({ po: odd, n: 1.5 });
    expect(txA.components).toHaveLength(1);
    // The service keeps a supplierBusinessId as supplierBusinessIds: the rest is as written.
    const { supplierBusinessId, ...written } = (rowA['components'] as Array<Record<string, unknown>>)[0]!;
    expect(txA.components[0]).toMatchObject({ ...written, supplierBusinessIds: [supplierBusinessId] });
    expect(sim.control.transactions().some((t) => t.customId.includes('\uFFFD'))).toBe(false);

    // The report: every refused row by line, escaped (JSON leaves C1 controls raw: they must not be there).
    const report = readFileSync(`${path}.report.ndjson`, 'utf8');
    expect(report).not.toMatch(/[\u007f-\u009f\u202e\u2028]/);
    expect(
      report
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { line: number }).line),
    ).toEqual([2, 3, 4, 5, 6, 7, 8]);
  }, 120_000);

  it('reads a named pipe once (ddsync submit <(…)) and reports its refused rows in the current directory', async () => {
    const supplier = sim.control.suppliers()[0]!.id;
    const dir = scratchDir('pipe');
    const child = spawn(
      'bash',
      ['-c', `exec "${process.execPath}" "${DDSYNC_BIN}" submit <(printf '%s\\n' "$ROW1" '{"key": broken' "$ROW2")`],
      {
        cwd: dir,
        env: {
          ...env,
          ROW1: JSON.stringify(shipmentRow(`cli-pipe-1-${run}`, supplier)),
          ROW2: JSON.stringify(shipmentRow(`cli-pipe-2-${run}`, supplier)),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(out).toContain('3 rows read: 2 accepted, 1 invalid');
    expect(out).toContain('  line 2: (row): not valid JSON: a value at column 9, found "b"');
    const batchId = /^batch ([0-9a-f-]{36}) started/m.exec(out)?.[1];
    expect(batchId).toBeDefined();
    const report = join(dir, `ddsync-submit-${batchId}.report.ndjson`);
    expect(out).toContain(`every row not sent, with its errors: ${report}`);
    expect(readdirSync(dir)).toEqual([`ddsync-submit-${batchId}.report.ndjson`]);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ line: 2, status: 'invalid' });
  }, 60_000);

  it('refuses a directory, an empty file and a report it cannot write, naming the path; nothing is kept', async () => {
    const dir = scratchDir('refused');
    const folder = join(dir, `folder-${run}`);
    mkdirSync(folder);
    const empty = join(dir, `empty-${run}.ndjson`);
    writeFileSync(empty, '\n  \n');
    const onlyBad = join(dir, `bad-${run}.ndjson`);
    writeFileSync(onlyBad, '{"key": "x"}\n');
    const cases: Array<[string[], string]> = [
      [['submit', folder], `ddsync submit: ${folder}: is a directory, not a file of shipments\nnothing was sent.\n`],
      [
        ['submit', empty],
        `ddsync submit: ${empty}: has no rows (it is empty, or holds only blank lines or []): nothing to send\nnothing was sent.\n`,
      ],
      [
        ['submit', onlyBad, '--report', join(dir, 'no-such-dir', 'r.ndjson')],
        `ddsync submit: ${join(dir, 'no-such-dir', 'r.ndjson')}: the report of the rows not sent cannot be written (ENOENT); give another with --report PATH\nnothing was sent.\n`,
      ],
    ];
    for (const [args, message] of cases) {
      const submit = runDdsync(args, env);
      expect(await submit.exited).toBe(1);
      expect(submit.output()).toBe(message);
    }
    const db = openWarehouse(env.DATABASE_URL!, 1);
    try {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from submission_batches where source in (${`empty-${run}.ndjson`}, ${`bad-${run}.ndjson`}, ${`folder-${run}`})`.execute(
        db,
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it('refuses a missing file and bad arguments clearly', async () => {
    const missing = runDdsync(['submit', '/no/such/file.ndjson'], env);
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toMatch(/ENOENT|no such file/);
    const bad = runDdsync(['submissions', 'status', 'not-a-batch'], env);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('BATCH must be a batch id (a UUID), got "not-a-batch"');
  });
});
