// Rewrites deploy/grafana/dashboards/ddsync.json from tools/grafana-dashboard.ts. Run it after changing
// the dashboard; test/unit/tools/grafana-dashboard.test.ts fails while the committed file differs.
// Usage: npm run dashboard
import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { DASHBOARD_FILE, dashboardJson } from './grafana-dashboard.ts';

await writeFile(DASHBOARD_FILE, dashboardJson());
process.stdout.write(`${relative(process.cwd(), DASHBOARD_FILE)} written\n`);
