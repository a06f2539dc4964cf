/**
 * `npm run bench [-- --quick] [-- --workers N] [-- --no-scaling] [-- --only TEXT] [-- --compare URL --admin user:pass]`
 *
 * Measures every authentication path of Divan against a bare node:http server answering a JSON body
 * of the same size, in the same run, alternating baseline and scenario so that drift shows. Figures
 * are ratios to the baseline, because these machines are shared and noisy. Divan runs with
 * `--workers N` (default: one per core) and the baseline with as many processes; a scaling phase
 * then measures a few scenarios with 1 and with N processes of each.
 */
import autocannon from 'autocannon';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, startProcess, type Measurement, type Running } from './bench-support.js';
import { AUTH_HANDLERS, JSON_HEADERS, LOG_LEVEL, basic, identityProblem, pemLine, prepare, runSecrets, scenarios, startDivan, type JwtKeys, type Scenario, type ScenarioRequest, type Setup } from './auth-setup.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const BASELINE = join(ROOT, 'dist', 'bench', 'baseline-server.js');

interface Options {
  quick: boolean;
  compare?: string;
  compareAdmin?: [string, string];
  connections: number;
  duration: number;
  warmup: number;
  workers: number;
  scaling: boolean;
  /** `--only TEXT`: only the scenarios whose name contains it (cold logins too when it matches). */
  only?: string;
}

function parseOptions(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const at = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const admin = at('--admin');
  const [name, ...password] = (admin ?? '').split(':');
  return {
    quick,
    compare: at('--compare')?.replace(/\/$/, ''),
    compareAdmin: admin ? [name!, password.join(':')] : undefined,
    connections: Number(at('--connections') ?? 32),
    duration: Number(at('--duration') ?? (quick ? 2 : 10)),
    warmup: quick ? 2 : 3,
    workers: Number(at('--workers') ?? availableParallelism()),
    scaling: !argv.includes('--no-scaling'),
    only: at('--only'),
  };
}

let uniqueCounter = 0;

function cannonOptions(url: string, request: ScenarioRequest, connections: number, duration: number): autocannon.Options {
  const options: autocannon.Options = { url: url + request.path, connections, duration, method: (request.method ?? 'GET') as autocannon.Request['method'], headers: request.headers, body: request.body };
  if (request.uniquePath) {
    options.requests = [{ setupRequest: (req) => ({ ...req, path: `${request.path}${process.pid}-${uniqueCounter++}` }) }];
  }
  return options;
}

async function measure(url: string, scenario: Scenario, options: Options): Promise<Measurement> {
  await load(cannonOptions(url, scenario.request, options.connections, options.warmup));
  return load(cannonOptions(url, scenario.request, options.connections, options.duration));
}

interface Target {
  label: string;
  url: string;
  setup: Setup;
}

/**
 * With `--compare`: the other server gets this run's proxy secret and JWT keys through its `_config`
 * API (CouchDB's names; PEM line breaks written as `\\n`, as its ini files hold them), so proxy and
 * JWT are measured there too, with the same tokens' shapes. It also gets Divan's log level here:
 * CouchDB logs every request at its default level, and writing a line per request would cost it
 * what Divan, at `warning`, does not pay.
 */
async function configureCompared(url: string, admin: [string, string], secret: string, keys: JwtKeys): Promise<void> {
  const settings: [string, string, string][] = [
    ['chttpd_auth', 'secret', secret],
    ['chttpd_auth', 'proxy_use_secret', 'true'],
    ['chttpd', 'authentication_handlers', AUTH_HANDLERS],
    ['jwt_keys', 'hmac:_default', keys.hmac.toString('base64')],
    ['jwt_keys', 'rsa:_default', pemLine(keys.rsa.publicKey)],
    ['jwt_keys', 'ec:_default', pemLine(keys.ec.publicKey)],
    ['log', 'level', LOG_LEVEL],
  ];
  for (const [section, key, value] of settings) {
    const answer = await call(url, `/_node/_local/_config/${section}/${encodeURIComponent(key)}`, {
      method: 'PUT',
      headers: { Authorization: basic(...admin), ...JSON_HEADERS },
      body: JSON.stringify(value),
    });
    if (answer.status >= 300) throw new Error(`cannot set [${section}] ${key} on ${url}: ${answer.status} ${answer.body}`);
  }
}

/** Cookie latency while `coldUsers` log in at once (600000 PBKDF2 iterations each). */
async function coldLogins(url: string, setup: Setup, options: Options): Promise<{ measurement: Measurement; loginsMs: number; loginStatuses: number[] }> {
  const started = Date.now();
  const loadRun = load(cannonOptions(url, { path: '/_session', headers: { Cookie: setup.cookie } }, options.connections, Math.max(3, options.duration)));
  await new Promise((wait) => setTimeout(wait, 300));
  const loginStarted = Date.now();
  const statuses = await Promise.all(
    setup.coldUsers.map(([name, password]) =>
      call(url, '/_session', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ name, password }) }).then((answer) => answer.status),
    ),
  );
  const loginsMs = Date.now() - loginStarted;
  const measurement = await loadRun;
  void started;
  return { measurement, loginsMs, loginStatuses: statuses };
}

function peakRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The process and its children (the workers), for the peak memory of the whole server. */
function processTree(pid: number): number[] {
  const children = readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
  return [pid, ...children.map(Number)];
}

interface Row {
  target: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  baselineRps?: number;
  ratio?: number;
  goal?: string;
  met?: boolean;
  note?: string;
}

function formatTable(rows: Row[], memory: string): string {
  const lines = [
    '| target | scenario | req/s | p50 ms | p99 ms | baseline req/s | ratio | goal | met |',
    '|---|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.target} | ${row.scenario} | ${row.rps.toFixed(0)} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.baselineRps?.toFixed(0) ?? '–'} | ${row.ratio?.toFixed(2) ?? '–'} | ${row.goal ?? ''} | ${row.met === undefined ? '' : row.met ? 'yes' : '**no**'}${row.note ? ` (${row.note})` : ''} |`,
    );
  }
  lines.push('', memory);
  return lines.join('\n');
}

const startBaseline = (bodySize: number, processes: number): Promise<Running> =>
  startProcess([BASELINE, String(bodySize), String(processes)], {}, /baseline listening on (http:\/\/\S+)\n/);

interface ScalingRow {
  scenario: string;
  one: number;
  many: number;
  baselineOne: number;
  baselineMany: number;
}

/** A few scenarios with 1 and with N processes of Divan and of the baseline: how far more cores carry. */
async function measureScaling(options: Options, secret: string, keys: JwtKeys): Promise<ScalingRow[]> {
  const perCount = new Map<number, { rps: Map<string, number>; baseline: number }>();
  for (const processes of [1, options.workers]) {
    const { divan, admin, data } = await startDivan(processes, secret, keys);
    try {
      const setup = await prepare(divan.url, admin, 0, {});
      const sample = await call(divan.url, '/_session', { headers: { Cookie: setup.cookie } });
      const baseline = await startBaseline(Buffer.byteLength(sample.body), processes);
      const rps = new Map<string, number>();
      try {
        const before = (await measure(baseline.url, { name: 'baseline', request: { path: '/' } }, options)).rps;
        for (const scenario of scenarios(setup).filter((each) => SCALING_SCENARIOS.includes(each.name))) {
          rps.set(scenario.name, (await measure(divan.url, scenario, options)).rps);
        }
        const after = (await measure(baseline.url, { name: 'baseline', request: { path: '/' } }, options)).rps;
        perCount.set(processes, { rps, baseline: (before + after) / 2 });
        process.stderr.write(`scaling, ${processes} process(es): ${[...rps].map(([name, value]) => `${name} ${value.toFixed(0)}`).join(', ')}; baseline ${((before + after) / 2).toFixed(0)}\n`);
      } finally {
        await baseline.stop();
      }
    } finally {
      await divan.stop();
      rmSync(data, { recursive: true, force: true });
    }
  }
  const one = perCount.get(1)!;
  const many = perCount.get(options.workers)!;
  return SCALING_SCENARIOS.map((scenario) => ({ scenario, one: one.rps.get(scenario) ?? 0, many: many.rps.get(scenario) ?? 0, baselineOne: one.baseline, baselineMany: many.baseline }));
}

const SCALING_SCENARIOS = ['cookie GET /_session', 'Basic GET /_session (repeated)', 'cookie GET /{db}/{doc}'];

function formatScaling(rows: ScalingRow[], workers: number): string {
  const lines = [
    `| scenario | Divan, 1 process | Divan, ${workers} workers | ${workers} ÷ 1 | baseline, 1 process | baseline, ${workers} processes | ${workers} ÷ 1 | Divan ${workers} ÷ baseline ${workers} |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.scenario} | ${row.one.toFixed(0)} | ${row.many.toFixed(0)} | ${(row.many / row.one).toFixed(2)} | ${row.baselineOne.toFixed(0)} | ${row.baselineMany.toFixed(0)} | ${(row.baselineMany / row.baselineOne).toFixed(2)} | ${(row.many / row.baselineMany).toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Issue 22's goals: every authentication path and the document read at ≥ 3× the other server's
 * req/s, and at ≥ 0.6× the bare node:http baseline with as many processes.
 */
const VERSUS_GOAL = 3;
const BASELINE_GOAL = 0.6;
const versusGoalApplies = (scenario: string): boolean => /GET \/_session$|GET \/_session \(|GET \/\{db\}\/\{doc\}/.test(scenario) && !scenario.includes('cold logins');

/** With `--compare`: Divan's req/s over the other server's, and over the baseline, scenario by scenario. */
function formatVersus(rows: Row[]): string {
  const other = rows.filter((row) => row.target !== 'Divan');
  if (other.length === 0) return '';
  const lines = [
    '| scenario | Divan req/s | other req/s | Divan ÷ other (goal ≥ 3) | met | Divan ÷ baseline (goal ≥ 0.6) | met |',
    '|---|---:|---:|---:|---|---:|---|',
  ];
  const verdict = (value: number, goal: number): string => (value >= goal ? 'yes' : '**no**');
  for (const row of other) {
    const divan = rows.find((candidate) => candidate.target === 'Divan' && candidate.scenario === row.scenario);
    if (!divan || row.rps === 0) continue;
    const times = divan.rps / row.rps;
    const applies = versusGoalApplies(row.scenario);
    const ofBaseline = divan.ratio === undefined ? '–' : divan.ratio.toFixed(2);
    const cells = [
      row.scenario,
      divan.rps.toFixed(0),
      row.rps.toFixed(0),
      times.toFixed(2),
      applies ? verdict(times, VERSUS_GOAL) : '',
      ofBaseline,
      applies && divan.ratio !== undefined ? verdict(divan.ratio, BASELINE_GOAL) : '',
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return `\n\n${lines.join('\n')}`;
}

async function measureTargets(targets: Target[], baseline: Running, options: Options, baselineRuns: number[]): Promise<Row[]> {
  const rows: Row[] = [];
  const measureBaseline = async (): Promise<number> => {
    const result = await measure(baseline.url, { name: 'baseline', request: { path: '/' } }, options);
    baselineRuns.push(result.rps);
    return result.rps;
  };
  // A process just started (and its workers) is slower for a few seconds (JIT): warm both first.
  await load(cannonOptions(baseline.url, { path: '/' }, options.connections, options.warmup * 2));
  for (const target of targets) {
    for (const scenario of scenarios(target.setup, options.only).filter((each) => !each.request.uniquePath)) {
      await load(cannonOptions(target.url, scenario.request, options.connections, options.warmup));
    }
  }
  let before = await measureBaseline();
  for (const target of targets) {
    for (const scenario of scenarios(target.setup, options.only)) {
      const probe = await call(target.url, scenario.request.uniquePath ? `${scenario.request.path}probe` : scenario.request.path, {
        method: scenario.request.method ?? 'GET',
        headers: scenario.request.headers,
        body: scenario.request.body,
      });
      if (probe.status >= 300) {
        rows.push({ target: target.label, scenario: scenario.name, rps: 0, p50: 0, p99: 0, note: `not measured: answered ${probe.status}` });
        continue;
      }
      const wrongIdentity = identityProblem(scenario, probe.body);
      if (wrongIdentity !== undefined) {
        // A CouchDB applies a changed [chttpd] authentication_handlers only after a restart.
        process.stderr.write(`${target.label}: ${scenario.name} ${wrongIdentity}; is its authentication_handlers setting live (CouchDB: restart it)?\n`);
        rows.push({ target: target.label, scenario: scenario.name, rps: 0, p50: 0, p99: 0, note: `not measured: ${wrongIdentity}` });
        continue;
      }
      const result = await measure(target.url, scenario, options);
      const after = await measureBaseline();
      const baselineRps = (before + after) / 2;
      before = after;
      const ratio = result.rps / baselineRps;
      rows.push({
        target: target.label,
        scenario: scenario.name,
        ...result,
        baselineRps,
        ratio,
        goal: scenario.goal?.ratio === undefined ? undefined : `≥ ${scenario.goal.ratio}`,
        met: scenario.goal?.ratio === undefined ? undefined : ratio >= scenario.goal.ratio,
        note: result.non2xx + result.errors > 0 ? `${result.non2xx} non-2xx, ${result.errors} errors` : undefined,
      });
      process.stderr.write(`${target.label}: ${scenario.name}: ${result.rps.toFixed(0)} req/s, ratio ${ratio.toFixed(2)}\n`);
    }
    const coldName = `cookie GET /_session during ${target.setup.coldUsers.length} cold logins`;
    if (options.only !== undefined && !coldName.includes(options.only)) continue;
    const cold = await coldLogins(target.url, target.setup, options);
    rows.push({
      target: target.label,
      scenario: coldName,
      ...cold.measurement,
      goal: 'p99 < 25 ms',
      met: cold.measurement.p99 < 25,
      note: `logins took ${cold.loginsMs} ms, statuses ${[...new Set(cold.loginStatuses)].join('/')}`,
    });
  }
  return rows;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const { secret, keys } = runSecrets();
  const { divan, admin, data } = await startDivan(options.workers, secret, keys);
  const coldCount = 8;
  const targets: Target[] = [{ label: 'Divan', url: divan.url, setup: await prepare(divan.url, admin, coldCount, { secret, jwtKeys: keys }) }];
  if (options.compare && options.compareAdmin) {
    await configureCompared(options.compare, options.compareAdmin, secret, keys);
    targets.push({ label: new URL(options.compare).host, url: options.compare, setup: await prepare(options.compare, options.compareAdmin, coldCount, { secret, jwtKeys: keys }) });
  }
  const sample = await call(divan.url, '/_session', { headers: { Cookie: targets[0]!.setup.cookie } });
  const baseline = await startBaseline(Buffer.byteLength(sample.body), options.workers);

  let rows: Row[] = [];
  const baselineRuns: number[] = [];
  let peak: number | undefined;
  try {
    rows = await measureTargets(targets, baseline, options, baselineRuns);
  } finally {
    const peaks = processTree(divan.pid).map(peakRssMb);
    peak = peaks.every((value) => value !== undefined) ? peaks.reduce((sum: number, value) => sum + value!, 0) : undefined;
    await divan.stop();
    await baseline.stop();
    rmSync(data, { recursive: true, force: true });
  }
  const scaling = options.scaling && options.workers > 1 ? await measureScaling(options, secret, keys) : [];
  const memory = `Peak resident memory of the Divan processes (primary, ${options.workers} workers and as many heavy-lane processes, summed): ${peak === undefined ? 'unknown' : `${peak.toFixed(1)} MiB`}. Baseline runs (req/s): ${baselineRuns.map((value) => value.toFixed(0)).join(', ')}.`;
  const header = `# Benchmark results\n\n${new Date().toISOString()}, ${options.quick ? 'quick' : 'full'} run: ${options.connections} connections, ${options.duration} s per scenario after ${options.warmup} s of warm-up, Node ${process.version}, ${availableParallelism()} cores. Divan runs ${options.workers} worker processes and the bare node:http baseline as many processes. Ratios are to that baseline (same body size) measured just before and after each scenario.\n\n`;
  const table = formatTable(rows, memory) + formatVersus(rows) + (scaling.length > 0 ? `\n\nScaling (req/s):\n\n${formatScaling(scaling, options.workers)}` : '');
  process.stdout.write(`\n${table}\n`);
  writeFileSync(join(ROOT, 'bench', 'results.md'), `${header}${table}\n`);
  writeFileSync(join(ROOT, 'bench', 'results.json'), `${JSON.stringify({ date: new Date().toISOString(), options: { ...options, compareAdmin: undefined }, rows, scaling, peakRssMb: peak, baselineRuns }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
