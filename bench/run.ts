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
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { generateKeyPair, type KeyPair } from '../test/support/key-pairs.js';
import { call, load, startProcess, type Measurement, type Running } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
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

const basic = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
const JSON_HEADERS = { 'Content-Type': 'application/json' };

interface ScenarioRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Each request gets its own path (path + a counter), e.g. to create new documents. */
  uniquePath?: boolean;
}

interface Scenario {
  name: string;
  goal?: { ratio?: number };
  request: ScenarioRequest;
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

interface Setup {
  cookie: string;
  basic: string;
  proxy?: Record<string, string>;
  jwt?: { hs256: string; rs256: string; es256: string };
  db: string;
  doc: string;
  coldUsers: [string, string][];
}

/** Users, a members-only database with a document, and a cookie, on any CouchDB-compatible server. */
async function prepare(url: string, admin: [string, string], coldUserCount: number, extras: { secret?: string; jwtKeys?: JwtKeys }): Promise<Setup> {
  const adminAuth = { Authorization: basic(...admin) };
  const user = `bench${randomBytes(3).toString('hex')}`;
  const password = 'bench-pass';
  const putUser = (name: string, pass: string) =>
    call(url, `/_users/org.couchdb.user:${name}`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ name, password: pass, roles: [], type: 'user' }) });
  if ((await putUser(user, password)).status >= 300) throw new Error(`cannot create a user on ${url}`);
  const db = `bench-${randomBytes(3).toString('hex')}`;
  await call(url, `/${db}`, { method: 'PUT', headers: adminAuth });
  await call(url, `/${db}/_security`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ members: { names: [user], roles: [] }, admins: { names: [], roles: [] } }) });
  await call(url, `/${db}/doc1`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ title: 'benchmark document', n: 1 }) });
  const login = await call(url, '/_session', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ name: user, password }) });
  const cookie = String([login.headers['set-cookie']].flat()[0] ?? '').split(';')[0]!;
  const coldUsers: [string, string][] = [];
  await Promise.all(
    Array.from({ length: coldUserCount }, async (_, i) => {
      const name = `${user}-cold${i}`;
      await putUser(name, `cold-pass-${i}`);
      coldUsers.push([name, `cold-pass-${i}`]);
    }),
  );
  const setup: Setup = { cookie, basic: basic(user, password), db, doc: 'doc1', coldUsers };
  // Every worker process checks the password once (PBKDF2) before it is measured: new connections
  // go to the workers in turn, and a worker's verified-password cache is its own.
  for (let i = 0; i < 4 * availableParallelism(); i++) {
    await call(url, '/_session', { headers: { Authorization: setup.basic, Connection: 'close' } });
    await call(url, '/_session', { headers: { Cookie: cookie, Connection: 'close' } });
  }
  if (extras.secret) {
    setup.proxy = {
      'X-Auth-CouchDB-UserName': user,
      'X-Auth-CouchDB-Roles': 'bench',
      'X-Auth-CouchDB-Token': createHmac('sha256', extras.secret).update(user).digest('hex'),
    };
  }
  if (extras.jwtKeys) setup.jwt = await jwtTokens(user, extras.jwtKeys);
  return setup;
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

interface JwtKeys {
  hmac: Buffer;
  rsa: KeyPair;
  ec: KeyPair;
}

async function jwtTokens(sub: string, keys: JwtKeys): Promise<{ hs256: string; rs256: string; es256: string }> {
  const claims = { sub, exp: Math.floor(Date.now() / 1000) + 3600, '_couchdb.roles': ['bench'] };
  return {
    hs256: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(keys.hmac),
    rs256: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(keys.rsa.privateKey),
    es256: await new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).sign(keys.ec.privateKey),
  };
}

function scenarios(setup: Setup, only?: string): Scenario[] {
  return allScenarios(setup).filter((scenario) => only === undefined || scenario.name.includes(only));
}

function allScenarios(setup: Setup): Scenario[] {
  const list: Scenario[] = [
    { name: 'cookie GET /_session', goal: { ratio: 0.5 }, request: { path: '/_session', headers: { Cookie: setup.cookie } } },
    { name: 'Basic GET /_session (repeated)', goal: { ratio: 0.5 }, request: { path: '/_session', headers: { Authorization: setup.basic } } },
  ];
  if (setup.proxy) list.push({ name: 'proxy GET /_session (token)', goal: { ratio: 0.5 }, request: { path: '/_session', headers: setup.proxy } });
  if (setup.jwt) {
    list.push(
      { name: 'JWT HS256 GET /_session', goal: { ratio: 0.5 }, request: { path: '/_session', headers: { Authorization: `Bearer ${setup.jwt.hs256}` } } },
      { name: 'JWT RS256 GET /_session', goal: { ratio: 0.4 }, request: { path: '/_session', headers: { Authorization: `Bearer ${setup.jwt.rs256}` } } },
      { name: 'JWT ES256 GET /_session', goal: { ratio: 0.4 }, request: { path: '/_session', headers: { Authorization: `Bearer ${setup.jwt.es256}` } } },
    );
  }
  list.push(
    { name: 'anonymous GET /', request: { path: '/' } },
    { name: 'cookie GET /{db}/{doc}', goal: { ratio: 0.35 }, request: { path: `/${setup.db}/${setup.doc}`, headers: { Cookie: setup.cookie } } },
    {
      name: 'cookie PUT /{db}/{doc} (new docs)',
      goal: { ratio: 0.1 },
      request: { method: 'PUT', path: `/${setup.db}/w-`, headers: { Cookie: setup.cookie, ...JSON_HEADERS }, body: JSON.stringify({ title: 'benchmark write', n: 1 }), uniquePath: true },
    },
  );
  return list;
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

/** Both servers' log level during a run: no line per request. */
const LOG_LEVEL = 'warning';

const AUTH_HANDLERS =
  '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, proxy_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';

/** A public key in PEM on one line, line breaks as `\\n` (how CouchDB's and Divan's `[jwt_keys]` hold them). */
const pemLine = (key: JwtKeys['rsa']['publicKey']): string => String(key.export({ type: 'spki', format: 'pem' })).trim().replace(/\n/g, '\\n');

function writeIni(file: string, secret: string, keys: JwtKeys): void {
  writeFileSync(
    file,
    [
      '[chttpd]',
      `authentication_handlers = ${AUTH_HANDLERS}`,
      '[chttpd_auth]',
      `secret = ${secret}`,
      'proxy_use_secret = true',
      '[jwt_keys]',
      `hmac:_default = ${keys.hmac.toString('base64')}`,
      `rsa:_default = ${pemLine(keys.rsa.publicKey)}`,
      `ec:_default = ${pemLine(keys.ec.publicKey)}`,
      '[log]',
      `level = ${LOG_LEVEL}`,
      '',
    ].join('\n'),
  );
}

/** Divan on a fresh data directory with `workers` processes, and its admin. */
async function startDivan(workers: number, secret: string, keys: JwtKeys): Promise<{ divan: Running; admin: [string, string]; data: string }> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-'));
  const ini = join(data, 'bench.ini');
  writeIni(ini, secret, keys);
  const admin: [string, string] = ['admin', randomBytes(8).toString('hex')];
  const divan = await startProcess(
    [MAIN, '--port', '0', '--workers', String(workers), '--data', data, '--config', ini],
    { COUCHDB_USER: admin[0], COUCHDB_PASSWORD: admin[1] },
    /Divan listening on (http:\/\/\S+)\n/,
  );
  return { divan, admin, data };
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
  const secret = randomBytes(16).toString('hex');
  const keys: JwtKeys = {
    hmac: randomBytes(32),
    rsa: generateKeyPair({ type: 'rsa', modulusLength: 2048 }),
    ec: generateKeyPair({ type: 'ec', namedCurve: 'P-256' }),
  };
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
  const memory = `Peak resident memory of the Divan processes (primary and ${options.workers} workers, summed): ${peak === undefined ? 'unknown' : `${peak.toFixed(1)} MiB`}. Baseline runs (req/s): ${baselineRuns.map((value) => value.toFixed(0)).join(', ')}.`;
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
