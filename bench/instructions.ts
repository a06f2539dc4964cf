/**
 * `npm run bench:instructions [-- --requests N] [-- --rounds R] [-- --only TEXT]`
 *
 * CPU instructions per request of each authentication path, counted by valgrind's callgrind in one
 * Divan process and in the bare node:http baseline, in the same run. Time on a shared 2-core
 * machine moves by a factor of two with the neighbours' load; an instruction count does not, so a
 * change of a few percent on the hot path shows here when req/s cannot tell it from noise.
 *
 * Each server runs under callgrind (about 50 times slower, so a few thousand requests take
 * seconds). Per scenario: a warm-up, then callgrind's counters are zeroed, N requests are sent,
 * and the counters are dumped; every scenario is measured R times, the rounds one after the other,
 * so the table shows how far a count moves between rounds (JIT and GC timing: a few percent). Two
 * counts are reported: the main thread (JavaScript, the HTTP parser, the syscall wrappers: the
 * request itself) and all threads (adding V8's background compilers and GC helpers, which vary
 * more). The kernel's side of each syscall is not counted. Requires valgrind.
 */
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, startProcess, type Running } from './bench-support.js';
import { identityProblem, prepare, runSecrets, scenarios, startDivan, type ScenarioRequest } from './auth-setup.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BASELINE = join(ROOT, 'dist', 'bench', 'baseline-server.js');
/** Few connections: under callgrind the server is slow, and the count per request does not depend on them. */
const CONNECTIONS = 8;

interface Options {
  requests: number;
  warmup: number;
  rounds: number;
  only?: string;
}

function parseOptions(argv: string[]): Options {
  const at = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const requests = Number(at('--requests') ?? 6000);
  return { requests, warmup: Math.max(2000, Math.round(requests * 0.75)), rounds: Math.max(1, Number(at('--rounds') ?? 2)), only: at('--only') };
}

/** A server under callgrind, its dumps written to `dir`. */
interface Counted {
  running: Running;
  dir: string;
}

function callgrind(dir: string): string[] {
  return ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'callgrind.%p')}`];
}

function control(pid: number, command: '-z' | '-d'): void {
  execFileSync('callgrind_control', [command, String(pid)], { stdio: 'ignore' });
}

/** Instructions since the last zeroing, main thread and all threads; the dumps are removed. */
function readDumps(dir: string): { main: number; all: number } {
  let main = 0;
  let all = 0;
  for (const file of readdirSync(dir).filter((name) => name.startsWith('callgrind.'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    const match = /^(?:totals|summary): (\d+)/m.exec(text);
    const count = match ? Number(match[1]) : 0;
    all += count;
    // callgrind numbers thread files `-01`, `-02`, …: the first is the main thread.
    if (file.endsWith('-01')) main = count;
    rmSync(join(dir, file));
  }
  return { main, all };
}

async function send(url: string, request: ScenarioRequest, amount: number): Promise<number> {
  let counter = 0;
  const result = await autocannon({
    url: url + request.path,
    connections: CONNECTIONS,
    amount,
    method: (request.method ?? 'GET') as autocannon.Request['method'],
    headers: request.headers,
    body: request.body,
    requests: request.uniquePath ? [{ setupRequest: (req) => ({ ...req, path: `${request.path}${randomBytes(4).toString('hex')}-${counter++}` }) }] : undefined,
  });
  return result.non2xx + result.errors;
}

async function count(server: Counted, request: ScenarioRequest, options: Options): Promise<{ main: number; all: number; failures: number }> {
  await send(server.running.url, request, options.warmup);
  control(server.running.pid, '-z');
  const failures = await send(server.running.url, request, options.requests);
  control(server.running.pid, '-d');
  const { main, all } = readDumps(server.dir);
  // The dump after zeroing holds what the measured requests cost (plus the event loop idling).
  return { main: main / options.requests, all: all / options.requests, failures };
}

/** One scenario's counts, a value per round. */
interface Row {
  scenario: string;
  main: number[];
  all: number[];
  failures: number;
}

const k = (value: number): string => `${(value / 1000).toFixed(1)}k`;
/** `93.0k` or `93.0k–95.1k` over the rounds. */
const range = (values: number[]): string => (values.length === 1 ? k(values[0]!) : `${k(Math.min(...values))}–${k(Math.max(...values))}`);
const ratio = (values: number[], baseline: number[]): string => (Math.min(...values) / Math.min(...baseline)).toFixed(2);

function formatTable(rows: Row[], baseline: Row, options: Options): string {
  const lines = [
    `${options.requests} requests per scenario and round after ${options.warmup} of warm-up, ${options.rounds} round(s), ${CONNECTIONS} connections, Node ${process.version}, one Divan process (\`--workers 1\`). Ratios compare the lowest count of each.`,
    '',
    '| scenario | instructions per request, main thread | ÷ baseline | all threads | ÷ baseline |',
    '|---|---:|---:|---:|---:|',
    `| bare node:http baseline | ${range(baseline.main)} | 1.00 | ${range(baseline.all)} | 1.00 |`,
  ];
  for (const row of rows) {
    const note = row.failures > 0 ? ` (${row.failures} failed requests)` : '';
    lines.push(`| ${row.scenario}${note} | ${range(row.main)} | ${ratio(row.main, baseline.main)} | ${range(row.all)} | ${ratio(row.all, baseline.all)} |`);
  }
  return lines.join('\n');
}

/** Adds one round's counts to the scenario's row. */
function record(rows: Row[], scenario: string, counted: { main: number; all: number; failures: number }): Row {
  let row = rows.find((each) => each.scenario === scenario);
  if (row === undefined) rows.push((row = { scenario, main: [], all: [], failures: 0 }));
  row.main.push(counted.main);
  row.all.push(counted.all);
  row.failures += counted.failures;
  return row;
}

async function main(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('bench:instructions needs valgrind (apt-get install valgrind)\n');
    process.exit(1);
  }
  const options = parseOptions(process.argv.slice(2));
  const { secret, keys } = runSecrets();
  const rows: Row[] = [];
  const baselineRows: Row[] = [];
  // The baseline answers a body the size of `GET /_session`'s, as the req/s benchmark's does.
  let bodySize = 0;

  const divanDumps = mkdtempSync(join(tmpdir(), 'divan-callgrind-'));
  const { divan, admin, data } = await startDivan(1, secret, keys, callgrind(divanDumps));
  const counted: Counted = { running: divan, dir: divanDumps };
  try {
    // No cold users: each would cost a PBKDF2 of the password, slow under callgrind and not measured here.
    const setup = await prepare(divan.url, admin, 0, { secret, jwtKeys: keys, warmRounds: 1 });
    bodySize = Buffer.byteLength((await call(divan.url, '/_session', { headers: { Cookie: setup.cookie } })).body);
    for (const scenario of scenarios(setup, options.only)) {
      const probe = await call(divan.url, scenario.request.uniquePath ? `${scenario.request.path}probe` : scenario.request.path, {
        method: scenario.request.method ?? 'GET',
        headers: scenario.request.headers,
        body: scenario.request.body,
      });
      if (probe.status >= 300) throw new Error(`${scenario.name} answered ${probe.status}: ${probe.body}`);
      const wrongIdentity = identityProblem(scenario, probe.body);
      if (wrongIdentity !== undefined) throw new Error(`${scenario.name} ${wrongIdentity}`);
    }
    for (let round = 1; round <= options.rounds; round++) {
      for (const scenario of scenarios(setup, options.only)) {
        const row = record(rows, scenario.name, await count(counted, scenario.request, options));
        process.stderr.write(`round ${round}: ${scenario.name}: ${k(row.main.at(-1)!)} instructions per request (main thread)\n`);
      }
    }
  } finally {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
    rmSync(divanDumps, { recursive: true, force: true });
  }

  const baselineDumps = mkdtempSync(join(tmpdir(), 'divan-callgrind-'));
  const baseline = await startProcess([BASELINE, String(bodySize), '1'], {}, /baseline listening on (http:\/\/\S+)\n/, callgrind(baselineDumps));
  try {
    for (let round = 1; round <= options.rounds; round++) record(baselineRows, 'baseline', await count({ running: baseline, dir: baselineDumps }, { path: '/' }, options));
  } finally {
    await baseline.stop();
    rmSync(baselineDumps, { recursive: true, force: true });
  }

  const table = formatTable(rows, baselineRows[0]!, options);
  process.stdout.write(`\n${table}\n`);
  writeFileSync(join(ROOT, 'bench', 'instructions-results.md'), `# Instructions per request\n\n${new Date().toISOString()}. ${table}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:instructions failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
