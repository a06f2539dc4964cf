/**
 * `npm run bench:engine [-- --docs 100000[,1000000]] [-- --duration S] [-- --storage postgres --postgres-url URL]
 *   [-- --compare http://admin:pass@host:port] [-- --writes] [-- --mixed] [-- --heavy N]`
 *
 * The index engine's scenarios (issue 33) at N documents: bulk insert (1 000 per `_bulk_docs`), view
 * build (map + `_count`), grouped reduce (`group_level=1`, `_sum` and a JavaScript sum, 2 rows per
 * document), whole-view `_count` and JavaScript sum, `group_level=2` over a key range, a view key range, `_changes?since=0&limit=500`, `_all_docs?limit=100` (and from a
 * `startkey` in the middle), and the p99 of one-document GETs while 2 full-scan `_find` clients and
 * 2 grouped-reduce clients run, then how long the server stays busy once they stop. The baseline,
 * measured in the same run, is a bare node:http server (req/s) and the GET p99 of the idle server.
 * With `--compare` the same scenarios run against another server and a column gives Divan ÷ it;
 * with two sizes a column gives how each figure grows from the first to the second. With `--writes`
 * only the write-side scenarios run (bulk insert and the two view builds, with the bare server's
 * req/s measured just before them), and the report is printed, not written to engine-results.md.
 * With `--mixed` only the mixed runs follow the builds (printed too); `--heavy N` sets how many
 * clients of each heavy kind they run (2 by default). The mixed runs are two: under a built-in
 * `group_level=1` reduce, and under a `group=true` JavaScript reduce (mostly rows at the groups'
 * edges, reduced in the sandbox).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, startProcess, type Measurement } from './bench-support.js';

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
}

/** One figure of a scenario; `higherIsBetter` decides the direction of the ratio to the other server. */
interface Figure {
  scenario: string;
  value: number;
  unit: 'req/s' | 's' | 'ms';
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

/** Writes the documents, 1 000 per `_bulk_docs`; answers the seconds taken. */
async function insert(target: Target, db: string, docs: number): Promise<number> {
  await must(target, `/${db}`, 'PUT');
  const started = performance.now();
  for (let start = 0; start < docs; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, docs - start) }, (_, i) => {
      const n = start + i;
      return { _id: docId(n), n, name: `user ${n}`, tags: [`t${n % TAGS}`, `t${(n * 7 + 3) % TAGS}`] };
    });
    await must(target, `/${db}/_bulk_docs`, 'POST', { docs: batch });
  }
  return (performance.now() - started) / 1000;
}

/** Saves a design document and times its first query, which builds the index; answers seconds. */
async function build(target: Target, db: string, name: string, ddoc: object, query: string): Promise<number> {
  await must(target, `/${db}/_design/${name}`, 'PUT', ddoc);
  const started = performance.now();
  await must(target, `/${db}/_design/${name}/_view/${query}`);
  return (performance.now() - started) / 1000;
}

async function rate(target: Target, path: string, connections = CONNECTIONS): Promise<Measurement> {
  const options = { url: target.url + path, headers: target.headers, connections, timeout: 120 };
  await load({ ...options, duration: 1 });
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx + measured.errors > 0) throw new Error(`${path}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
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
  progress({ scenario: 'bulk insert, 1 000 per _bulk_docs', value: await insert(target, db, docs), unit: 's' });
  await must(target, `/${db}/_security`, 'PUT', { admins: { names: [], roles: [] }, members: { names: [], roles: [] } });
  progress({ scenario: 'view build (map + _count)', value: await build(target, db, 'count', COUNT_DDOC, 'by_n?limit=1'), unit: 's' });
  const tagBuild = await build(target, db, 'bench', DDOC, 'by_tag?limit=1&reduce=false');
  if (WRITES_ONLY) {
    progress({ scenario: 'second view build (map + _sum, 2 rows per doc)', value: tagBuild, unit: 's' });
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
  if (!MIXED_ONLY) for (const [scenario, path] of queries) progress({ scenario, value: (await rate(target, `/${db}${path}`)).rps, unit: 'req/s' });
  for (const reduce of MIXED_REDUCES) for (const figure of await mixed(target, db, docs, reduce)) progress(figure);
  progress({ scenario: 'second view build (map + _sum, 2 rows per doc)', value: tagBuild, unit: 's' });
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
  if (b === undefined || a.value === 0 || b.value === 0) return '';
  return (a.unit === 'req/s' ? a.value / b.value : b.value / a.value).toFixed(2);
}

function shown(figure: Figure | undefined): string {
  if (figure === undefined) return '';
  return `${figure.value.toFixed(figure.unit === 'req/s' ? 1 : figure.unit === 's' ? 2 : 1)} ${figure.unit}`;
}

function table(sizes: number[], divan: Figure[][], other: Figure[][] | undefined): string {
  const head = ['scenario', ...sizes.map((n) => `Divan ${n}`), ...(other ? sizes.map((n) => `CouchDB ${n}`) : []), ...(other ? sizes.map((n) => `Divan ÷ CouchDB ${n}`) : []), ...(sizes.length > 1 ? [`growth ${sizes[0]} → ${sizes[sizes.length - 1]}`] : [])];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [row, first] of divan[0]!.entries()) {
    const mine = divan.map((figures) => figures[row]);
    const theirs = other?.map((figures) => figures[row]);
    const cells = [first.scenario, ...mine.map(shown), ...(theirs ?? []).map(shown), ...(theirs ? mine.map((figure, i) => ratio(figure!, theirs[i])) : [])];
    if (sizes.length > 1) {
      const last = mine[mine.length - 1]!;
      // Cost growth: time per request (or time) at the large size over the small one; req/s are
      // first divided by the bare server's req/s of the same size, so a busier machine is not growth.
      const bare = (figures: Figure[]): number => figures.find((figure) => figure.scenario.startsWith('bare'))!.value;
      const perBare = (figure: Figure, at: number): number => figure.value / bare(divan[at]!);
      const growth = first.unit === 'req/s' ? perBare(first, 0) / perBare(last, divan.length - 1) : last.value / first.value;
      cells.push(first.scenario.startsWith('bare') ? '' : Number.isFinite(growth) && growth > 0 ? `${growth.toFixed(2)}×` : 'n/a');
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function otherTarget(compare: string): Target {
  const url = new URL(compare);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  return { label: url.host, url: `${url.protocol}//${url.host}`, headers: { Authorization: auth } };
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-engine-'));
  const quiet = join(data, 'quiet.ini');
  writeFileSync(quiet, '[log]\nlevel = warning\n');
  const postgres = option('--storage') === 'postgres';
  if (postgres) {
    writeFileSync(quiet, `[log]\nlevel = warning\n[divan]\nstorage = postgres\npostgres_url = ${option('--postgres-url') ?? 'postgresql://postgres@127.0.0.1:5432/test'}\npostgres_schema = bench_engine_${process.pid}\n`);
  }
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', quiet], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  const mine: Target = { label: 'Divan', url: divan.url, headers: { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } };
  const compare = option('--compare');
  try {
    const started = performance.now();
    const divanFigures: Figure[][] = [];
    for (const docs of SIZES) divanFigures.push(await measure(mine, docs));
    const otherFigures = compare === undefined ? undefined : await sequence(SIZES, (docs) => measure(otherTarget(compare), docs));
    const minutes = (performance.now() - started) / 60_000;
    const header = `# Engine benchmark\n\n${new Date().toISOString()}, storage ${postgres ? 'postgres' : 'sqlite'}, ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}; the whole run took ${minutes.toFixed(1)} min.\n\n`;
    const text = `${header}${table(SIZES, divanFigures, otherFigures)}\n`;
    process.stdout.write(`\n${text}`);
    if (!WRITES_ONLY && !MIXED_ONLY) writeFileSync(join(ROOT, 'bench', 'engine-results.md'), text);
  } finally {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

async function sequence<T>(sizes: number[], run: (docs: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (const docs of sizes) results.push(await run(docs));
  return results;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
