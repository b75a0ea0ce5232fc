import { ConfigError, durationMs, loadConfig } from '../../platform/config.ts';
import { parseDesiredWebhooks } from '../../schema/desired-webhooks.ts';
import { scrubSecrets } from '../../platform/secrets.ts';
import { UsageError } from '../usage.ts';
import { lookAtTemporal, lookAtWarehouse } from '../status/gather.ts';
import { assess, type ReaderSetting } from '../status/judge.ts';
import { formatStatus, statusJson } from '../status/render.ts';
import { resolveThresholds, ThresholdOrderError, thresholdSettingsOf, type Thresholds } from '../status/thresholds.ts';

export interface StatusFlags {
  json?: boolean;
  /** Durations as given (checked by the flag parsers of cli/program.ts). */
  refreshWarning?: string;
  refreshCritical?: string;
  failures?: number;
  txWarning?: string;
  txCritical?: string;
  pdfOverdue?: string;
}

/** `ddsync status`: exit code 0 ok, 1 warning, 2 critical (docs/commands.md). */
export async function run(o: StatusFlags): Promise<number> {
  try {
    return await check(o);
  } catch (error) {
    // Bad flags and settings go the usual way (exit code 2, with the rule).
    if (error instanceof UsageError || error instanceof ConfigError) throw error;
    // Anything else must not read as a mere warning (the exit code 1 of other commands' failures): unknown is critical.
    const problem = scrubSecrets(error instanceof Error ? error.message : String(error));
    if (o.json) process.stdout.write(`${JSON.stringify({ level: 'critical', exitCode: 2, error: problem })}\n`);
    else process.stderr.write(`ddsync status: could not tell: ${problem}\n`);
    return 2;
  }
}

async function check(o: StatusFlags): Promise<number> {
  const config = loadConfig(['temporal', 'refresh', 'submission', 'webhooks', 'pdfs', 'monitoring']);
  const monitoring = config.monitoring!;
  // The BI login when there is one: status then reads exactly what dashboards can.
  const reader: { url: string; via: ReaderSetting } = monitoring.readerUrl
    ? { url: monitoring.readerUrl, via: 'DDSYNC_READER_URL' }
    : { url: loadConfig(['database']).database!.url, via: 'DATABASE_URL' };
  const thresholds = thresholdsOf(config, o);
  const desired = parseDesiredWebhooks(config.webhooks!.desired);
  const [warehouse, temporal] = await Promise.all([
    lookAtWarehouse(reader.url, reader.via),
    lookAtTemporal(
      { config: config.temporal! },
      { temporal: config.temporal!, refresh: config.refresh!, webhooks: config.webhooks!, pdfs: config.pdfs! },
    ),
  ]);
  const report = assess(warehouse, temporal, desired, thresholds, new Date());
  process.stdout.write(o.json ? `${JSON.stringify(statusJson(report))}\n` : formatStatus(report));
  return report.exitCode;
}

function thresholdsOf(config: ReturnType<typeof loadConfig>, o: StatusFlags): Thresholds {
  const ms = (text: string | undefined) => (text === undefined ? undefined : durationMs(text));
  try {
    return resolveThresholds(thresholdSettingsOf(config), {
      refreshWarning: ms(o.refreshWarning),
      refreshCritical: ms(o.refreshCritical),
      failures: o.failures,
      txWarning: ms(o.txWarning),
      txCritical: ms(o.txCritical),
      pdfOverdue: ms(o.pdfOverdue),
    });
  } catch (error) {
    if (!(error instanceof ThresholdOrderError)) throw error;
    // A flag's mistake comes with the command's help; a setting's with the pointer to the settings.
    if (error.byFlag) throw new UsageError(error.message);
    throw new ConfigError([error.message]);
  }
}
