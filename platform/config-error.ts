/**
 * A configuration that is missing or malformed: every problem at once, by setting name and rule,
 * never a value. Apart from config.ts so that the CLI can recognise it without loading zod
 * (`ddsync --help` and `--version` read no configuration).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}
