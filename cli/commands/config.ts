import { SECTIONS, SETTINGS, loadConfig, ConfigError } from '../../platform/config.ts';
import { warehouseModeLine } from '../spatial-mode.ts';

export async function run(o: { markdown?: boolean }): Promise<number> {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    const probe = s.schema.safeParse(undefined);
    const fallback = probe.success ? (probe.data === undefined ? '' : String(probe.data)) : '(required)';
    return { name, section: s.section, rule: s.rule, doc: s.doc, fallback, secret: 'secret' in s && s.secret === true };
  });
  if (o.markdown) {
    const lines = ['| Variable | Default | Rule | What it is |', '|---|---|---|---|'];
    for (const r of rows)
      lines.push(
        `| \`${r.name}\` | ${r.fallback === '(required)' ? 'required' : r.fallback ? `\`${r.fallback}\`` : ''} | ${r.rule} | ${r.doc}${r.secret ? ' Secret.' : ''} |`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }
  for (const r of rows) {
    const raw = process.env[r.name];
    const unset =
      r.fallback === '(required)' ? 'unset (required)' : `unset${r.fallback ? ` (default ${r.fallback})` : ''}`;
    const shown = raw === undefined || raw === '' ? unset : r.secret ? 'set (secret, not shown)' : raw;
    process.stdout.write(`${r.name.padEnd(26)} ${shown}\n`);
  }
  // Which spatial mode the warehouse is in (PostGIS or GeoJSON only), when DATABASE_URL reaches one.
  const mode = await warehouseModeLine();
  if (mode !== undefined) process.stdout.write(`\n${'warehouse spatial mode'.padEnd(26)} ${mode}\n`);
  try {
    loadConfig([...SECTIONS]);
    process.stdout.write('\nconfiguration complete: a worker can start with it\n');
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stdout.write(`\n${error.message}\n`);
    return 2;
  }
}
