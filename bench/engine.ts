/**
 * `npm run bench:engine [-- --docs 100000[,1000000]] [-- --duration S] [-- --storage postgres --postgres-url URL]
 *   [-- --compare http://admin:pass@host:port] [-- --writes] [-- --mixed] [-- --heavy N]`
 *
 * The index engine's scenarios at N documents: bulk insert (1 000 per `_bulk_docs`), view
 * build (map + `_count`), grouped reduce (`group_level=1`, `_sum` and a JavaScript sum, 2 rows per
 * document), whole-view `_count` and JavaScript sum, `group_level=2` over a key range, a view key range, `_changes?since=0&limit=500`, `_all_docs?limit=100` (and from a
 * `startkey` in the middle), and the p99 of one-document GETs while 2 full-scan `_find` clients and
 * 2 grouped-reduce clients run, then how long the server stays busy once they stop. The baseline,
 * measured in the same run, is a bare node:http server (req/s) and the GET p99 of the idle server.
 * With `--compare` the same scenarios run against another server and a column gives Divan ÷ it;
 * with two sizes a column per server gives how each figure grows from the first to the second. With `--writes`
 * only the write-side scenarios run (bulk insert and the two view builds, with the bare server's
 * req/s measured just before them), and the report is printed, not written to engine-results.md.
 * The writes also give the CPU seconds of the server's processes (Linux `/proc`; the compared server
 * when it listens on this machine), steadier than wall time on a shared machine.
 * With `--mixed` only the mixed runs follow the builds (printed too); `--heavy N` sets how many
 * clients of each heavy kind they run (2 by default). The mixed runs are two: under a built-in
 * `group_level=1` reduce, and under a `group=true` JavaScript reduce (mostly rows at the groups'
 * edges, reduced in the sandbox).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, cpuSeconds, listeningPid, load, postgresBenchSchema, startProcess, type Measurement } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ADMIN = { name: 'admin', password: 'bench-pass' };

function option(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}

const SIZES = (option('--docs') ?? '100000').split(',').map(Number);
const DURATION = Number(option('--duration') ?? 5);
const CONNECTIONS = 8;
const WRITES_ONLY = process.argv.includes('--writes');
const TAGS = 20;
/** Clients of each heavy kind in the mixed runs (`--heavy N`). */
const HEAVY = Number(option('--heavy') ?? 2);
/** Only the mixed runs (after the insert and the builds): `--mixed`. */
const MIXED_ONLY = process.argv.includes('--mixed');

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** The server's process (Linux): its CPU and its descendants' is measured beside the wall time of the writes. */
  pid?: number;
}

/** One figure of a scenario; `higherIsBetter` decides the direction of the ratio to the other server. */
interface Figure {
  scenario: string;
  value: number;
  unit: 'req/s' | 's' | 'ms' | 'CPU s';
  note?: string;
}

const TAG_MAP = 'function (doc) { if (doc.tags) { for (var i = 0; i < doc.tags.length; i++) emit([doc.tags[i], doc.n % 100], doc.n); } }';
const DDOC = {
  views: {
    by_tag: { map: TAG_MAP, reduce: '_sum' },
    // The same rows reduced by JavaScript (views with one map share their rows).
    by_tag_js: { map: TAG_MAP, reduce: 'function (keys, values, rereduce) { return sum(values); }' },
  },
};
const COUNT_DDOC = { views: { by_n: { map: 'function (doc) { if (typeof doc.n === "number") emit(doc.n, null); }', reduce: '_count' } } };

async function must(target: Target, path: string, method = 'GET', body?: unknown): Promise<string> {
  const res = await call(target.url, path, { method, headers: { ...target.headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return res.body;
}

function docId(n: number): string {
  return `doc-${String(n).padStart(8, '0')}`;
}

/** Times `work` (seconds) and, when the server's process is known, the CPU seconds the server spent meanwhile. */
async function timed(target: Target, scenario: string, work: () => Promise<unknown>): Promise<Figure[]> {
  const cpuBefore = target.pid === undefined ? 0 : cpuSeconds(target.pid);
  const started = performance.now();
  await work();
  const figures: Figure[] = [{ scenario, value: (performance.now() - started) / 1000, unit: 's' }];
  if (target.pid !== undefined) figures.push({ scenario: `${scenario}, server CPU`, value: cpuSeconds(target.pid) - cpuBefore, unit: 'CPU s' });
  return figures;
}

/** Writes the documents, 1 000 per `_bulk_docs`. */
async function insert(target: Target, db: string, docs: number): Promise<void> {
  for (let start = 0; start < docs; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, docs - start) }, (_, i) => {
      const n = start + i;
      return { _id: docId(n), n, name: `user ${n}`, tags: [`t${n % TAGS}`, `t${(n * 7 + 3) % TAGS}`] };
    });
    await must(target, `/${db}/_bulk_docs`, 'POST', { docs: batch });
  }
}

/** Saves a design document and times its first query, which builds the index. */
async function build(target: Target, db: string, scenario: string, name: string, ddoc: object, query: string): Promise<Figure[]> {
  await must(target, `/${db}/_design/${name}`, 'PUT', ddoc);
  return timed(target, scenario, async () => {
    for (;;) {
    // CouchDB answers 500 "timeout" after `[fabric] request_timeout` while its build goes on: ask again.
      const res = await call(target.url, `/${db}/_design/${name}/_view/${query}`, { headers: target.headers });
      if (res.status < 400) return;
      if (res.status !== 500 || !res.body.includes('"timeout"')) throw new Error(`build of ${name}: ${res.status} ${res.body.slice(0, 200)}`);
    }
  });
}

async function rate(target: Target, path: string, connections = CONNECTIONS): Promise<Measurement> {
  const options = { url: target.url + path, headers: target.headers, connections, timeout: 120 };
  await load({ ...options, duration: 1 });
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx + measured.errors > 0) throw new Error(`${path}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
  // Requests still running when the time is up are not counted: 0 req/s means none answered in time, not a rate.
  if (measured.rps === 0) throw new Error(`no answer within ${DURATION} s on ${connections} connections`);
  return measured;
}

/** One GET at a time until one answers within `fastMs`: how long the server stayed busy (ms). */
async function busyAfter(target: Target, path: string, fastMs: number): Promise<number> {
  const stopped = performance.now();
  for (;;) {
    const sent = performance.now();
    await must(target, path);
    if (performance.now() - sent <= fastMs) return sent - stopped;
  }
}

/** GET p99 of one client while `HEAVY` full-scan `_find` clients and `HEAVY` grouped-reduce clients (of `reduce`) run. */
async function mixed(target: Target, db: string, docs: number, reduce: { label: string; path: string }): Promise<Figure[]> {
  const get = `/${db}/${docId(Math.floor(docs / 2))}`;
  const idle = await rate(target, get, 1);
  const scan = JSON.stringify({ selector: { name: `user ${docs + 1}` } });
  const heavy = (options: { url: string; method?: 'POST'; body?: string }) => load({ headers: { ...target.headers, 'Content-Type': 'application/json' }, connections: HEAVY, duration: DURATION + 2, timeout: 600, ...options });
  const scans = heavy({ url: `${target.url}/${db}/_find`, method: 'POST', body: scan });
  const reduces = heavy({ url: `${target.url}/${db}${reduce.path}` });
  await new Promise((wait) => setTimeout(wait, 1000));
  const busy = await load({ url: target.url + get, headers: target.headers, connections: 1, duration: DURATION, timeout: 120 });
  const [scanned, reduced] = await Promise.all([scans, reduces]);
  const fastMs = Math.max(5, idle.p99 * 2);
  const idleAfter = await busyAfter(target, get, fastMs);
  const during = `while ${HEAVY} full-scan _find + ${HEAVY} ${reduce.label} clients run`;
  return [
    { scenario: 'one-document GET p50, idle server (baseline)', value: idle.p50, unit: 'ms' },
    { scenario: 'one-document GET p99, idle server (baseline)', value: idle.p99, unit: 'ms' },
    { scenario: `one-document GET p50 ${during}`, value: busy.p50, unit: 'ms' },
    { scenario: `one-document GET p99 ${during}`, value: busy.p99, unit: 'ms', note: `${busy.rps.toFixed(0)} GET/s; ${scanned.rps.toFixed(1)} _find/s, ${reduced.rps.toFixed(1)} reduces/s` },
    { scenario: `server busy after the ${reduce.label} clients stop (until a GET answers within ${fastMs.toFixed(0)} ms)`, value: idleAfter, unit: 'ms' },
  ];
}

/** The mixed runs: a built-in reduce (answered from stored partials) and a JavaScript one grouped by exact key (mostly edge rows, reduced in the sandbox). */
const MIXED_REDUCES = [
  { label: 'group_level=1 (_sum)', path: '/_design/bench/_view/by_tag?group_level=1' },
  { label: 'group=true JavaScript reduce', path: '/_design/bench/_view/by_tag_js?group=true' },
];

async function measure(target: Target, docs: number): Promise<Figure[]> {
  const db = `engine-bench-${docs}-${process.pid}`;
  await call(target.url, `/${db}`, { method: 'DELETE', headers: target.headers });
  const figures: Figure[] = [];
  const progress = (figure: Figure): void => {
    figures.push(figure);
    process.stderr.write(`${target.label} ${docs}: ${figure.scenario}: ${figure.value.toFixed(figure.unit === 'req/s' ? 1 : 2)} ${figure.unit}${figure.note === undefined ? '' : ` (${figure.note})`}\n`);
  };
  if (WRITES_ONLY) progress({ scenario: 'bare node:http server (baseline, just before the writes)', value: await bareRate(), unit: 'req/s' });
  await must(target, `/${db}`, 'PUT');
  for (const figure of await timed(target, 'bulk insert, 1 000 per _bulk_docs', () => insert(target, db, docs))) progress(figure);
  await must(target, `/${db}/_security`, 'PUT', { admins: { names: [], roles: [] }, members: { names: [], roles: [] } });
  for (const figure of await build(target, db, 'view build (map + _count)', 'count', COUNT_DDOC, 'by_n?limit=1')) progress(figure);
  const tagBuild = await build(target, db, 'second view build (map + _sum, 2 rows per doc)', 'bench', DDOC, 'by_tag?limit=1&reduce=false');
  if (WRITES_ONLY) {
    for (const figure of tagBuild) progress(figure);
    await must(target, `/${db}`, 'DELETE');
    return figures;
  }
  const started = performance.now();
  await must(target, `/${db}/_design/bench/_view/by_tag_js`);
  const firstJs = (performance.now() - started) / 1000;
  const queries: [string, string][] = [
    ['_view/by_tag?group_level=1 (_sum, 2 rows per doc)', '/_design/bench/_view/by_tag?group_level=1'],
    ['_view/by_tag_js?group_level=1 (JavaScript sum)', '/_design/bench/_view/by_tag_js?group_level=1'],
    ['whole-view JavaScript sum', '/_design/bench/_view/by_tag_js'],
    ['group_level=2 _sum over a key range (t1 only)', '/_design/bench/_view/by_tag?group_level=2&start_key=%5B%22t1%22%5D&end_key=%5B%22t1%22%2C%7B%7D%5D'],
    ['whole-view _count', '/_design/count/_view/by_n'],
    ['view key range (10 rows)', `/_design/count/_view/by_n?reduce=false&startkey=${Math.floor(docs / 2)}&endkey=${Math.floor(docs / 2) + 9}`],
    ['_changes?since=0&limit=500', '/_changes?since=0&limit=500'],
    ['_all_docs?limit=100', '/_all_docs?limit=100'],
    ['_all_docs?startkey=(middle)&limit=100', `/_all_docs?limit=100&startkey=%22${docId(Math.floor(docs / 2))}%22`],
  ];
  progress({ scenario: 'bare node:http server (baseline, just before the queries)', value: await bareRate(), unit: 'req/s' });
  if (!MIXED_ONLY) {
    for (const [scenario, path] of queries) {
      // One scenario that fails (timeouts of a loaded machine at 10⁶) is reported, not the run lost.
      const measured = await rate(target, `/${db}${path}`).catch((error: Error) => ({ rps: Number.NaN, failure: error.message }));
      progress({ scenario, value: measured.rps, unit: 'req/s', ...('failure' in measured ? { note: measured.failure } : {}) });
    }
  }
  for (const reduce of MIXED_REDUCES) for (const figure of await mixed(target, db, docs, reduce)) progress(figure);
  for (const figure of tagBuild) progress(figure);
  progress({ scenario: 'first JavaScript reduce of the built view (Divan: stores the block reductions)', value: firstJs, unit: 's' });
  await must(target, `/${db}`, 'DELETE');
  return figures;
}

/** The bare node:http server's req/s, started for the measure (the ceiling of this machine right now). */
async function bareRate(): Promise<number> {
  const baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), '150'], {}, /baseline listening on (\S+)/);
  try {
    return (await rate({ label: 'bare', url: baseline.url, headers: {} }, '/')).rps;
  } finally {
    await baseline.stop();
  }
}

/** How much better `a` is than `b`: req/s up is better, seconds and milliseconds down. */
function ratio(a: Figure, b: Figure | undefined): string {
  if (b === undefined || a.value === 0 || b.value === 0 || !Number.isFinite(a.value) || !Number.isFinite(b.value)) return '';
  return (a.unit === 'req/s' ? a.value / b.value : b.value / a.value).toFixed(2);
}

function shown(figure: Figure | undefined): string {
  if (figure === undefined) return '';
  if (!Number.isFinite(figure.value)) return `failed (${figure.note ?? ''})`;
  return `${figure.value.toFixed(figure.unit === 'req/s' || figure.unit === 'ms' ? 1 : 2)} ${figure.unit}`;
}

/**
 * How one server's cost of a row grows from the first size to the last: time per request (or time)
 * at the large size over the small one; req/s are first divided by that server's bare-server req/s
 * of the same size, so a busier machine is not counted as growth.
 */
function growth(figures: Figure[][], row: number): string {
  const first = figures[0]![row]!;
  const last = figures[figures.length - 1]![row]!;
  if (first.scenario.startsWith('bare')) return '';
  const bare = (at: Figure[]): number => at.find((figure) => figure.scenario.startsWith('bare'))!.value;
  const value = first.unit === 'req/s' ? first.value / bare(figures[0]!) / (last.value / bare(figures[figures.length - 1]!)) : last.value / first.value;
  return Number.isFinite(value) && value > 0 ? `${value.toFixed(2)}×` : 'n/a';
}

function table(sizes: number[], divan: Figure[][], other: Figure[][] | undefined): string {
  const growths = sizes.length > 1 ? [`Divan growth ${sizes[0]} → ${sizes[sizes.length - 1]}`, ...(other ? [`CouchDB growth ${sizes[0]} → ${sizes[sizes.length - 1]}`] : [])] : [];
  const head = ['scenario', ...sizes.map((n) => `Divan ${n}`), ...(other ? sizes.map((n) => `CouchDB ${n}`) : []), ...(other ? sizes.map((n) => `Divan ÷ CouchDB ${n}`) : []), ...growths];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [row, first] of divan[0]!.entries()) {
    const mine = divan.map((figures) => figures[row]);
    const theirs = other?.map((figures) => figures[row]);
    const cells = [first.scenario, ...mine.map(shown), ...(theirs ?? []).map(shown), ...(theirs ? mine.map((figure, i) => ratio(figure!, theirs[i])) : [])];
    if (sizes.length > 1) cells.push(growth(divan, row), ...(other ? [growth(other, row)] : []));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}


function otherTarget(compare: string): Target {
  const url = new URL(compare);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  const pid = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) ? listeningPid(url.port || '80') : undefined;
  return { label: url.host, url: `${url.protocol}//${url.host}`, headers: { Authorization: auth }, ...(pid === undefined ? {} : { pid }) };
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-engine-'));
  const quiet = join(data, 'quiet.ini');
  writeFileSync(quiet, '[log]\nlevel = warning\n');
  const postgres = option('--storage') === 'postgres';
  const schema = postgres ? postgresBenchSchema('engine', option('--postgres-url')) : undefined;
  if (schema !== undefined) writeFileSync(quiet, `[log]\nlevel = warning\n${schema.ini}`);
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', quiet], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  const mine: Target = { label: 'Divan', url: divan.url, pid: divan.pid, headers: { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } };
  const compare = option('--compare');
  try {
    const started = performance.now();
    const divanFigures: Figure[][] = [];
    const otherFigures: Figure[][] | undefined = compare === undefined ? undefined : [];
    const report = (): string => {
      const minutes = (performance.now() - started) / 60_000;
      const measured = SIZES.slice(0, divanFigures.length);
      const header = `# Engine benchmark\n\n${new Date().toISOString()}, storage ${postgres ? 'postgres' : 'sqlite'}, ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}; ${measured.length < SIZES.length ? 'so far' : 'the whole run took'} ${minutes.toFixed(1)} min.\n\n`;
      return `${header}${table(measured, divanFigures, otherFigures)}\n`;
    };
    // Size by size, Divan then the other server: the two measures of one size are minutes apart,
    // not the whole run, so a change of the shared machine's load between sizes hits both alike.
    for (const docs of SIZES) {
      divanFigures.push(await measure(mine, docs));
      if (compare !== undefined) otherFigures!.push(await measure(otherTarget(compare), docs));
      // Each size's table is kept as soon as it is measured: a long run stopped later keeps it.
      if (!WRITES_ONLY && !MIXED_ONLY) writeFileSync(join(ROOT, 'bench', 'engine-results.md'), report());
    }
    process.stdout.write(`\n${report()}`);
  } finally {
    await divan.stop();
    await schema?.drop();
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
