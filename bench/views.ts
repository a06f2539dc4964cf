/**
 * `npm run bench:views [-- --quick] [-- --docs N] [-- --compare URL --admin user:pass]`
 *
 * Map/reduce views: the index build rate (documents/s) for N documents (100 000 by default) with
 * three views (`by_type`: one row and `_sum`; `by_tag`: two array-keyed rows per document and
 * `_sum`; `counted`: `_count`), and view queries per second (map rows by key, `group=true`,
 * `group_level=1` over two rows per document, whole-view `_sum` and `_count`, a key-range reduce). Ratios are to baselines measured in the same run: the build against writing
 * the same documents with `_bulk_docs`, the queries against a bare node:http server answering a body
 * of the same size and against reading one document. With `--compare`, the same against a CouchDB,
 * then a table of Divan ÷ CouchDB per measure, plain and with each result over its own baseline.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const BASELINE = join(ROOT, 'dist', 'bench', 'baseline-server.js');

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const QUICK = argv.includes('--quick');
const DOCS = Number(flag('--docs') ?? (QUICK ? 20_000 : 100_000));
const DURATION = QUICK ? 3 : 10;
const CONNECTIONS = 8;

interface Running {
  url: string;
  stop(): Promise<void>;
}

function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<Running> {
  const child: ChildProcess = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((done, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = ready.exec(out);
      if (match) done({ url: match[1]!.replace(/\/$/, ''), stop: () => new Promise<void>((stopped) => (child.once('exit', () => stopped()), child.kill('SIGTERM'))) });
    });
    child.once('exit', (code) => fail(new Error(`exited with ${code}: ${out}`)));
  });
}

async function call(url: string, auth: string, path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: unknown; bytes: number }> {
  const res = await fetch(url + path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return { status: res.status, body: JSON.parse(text), bytes: Buffer.byteLength(text) };
}

const DDOC = {
  views: {
    by_type: { map: 'function (doc) { if (doc.type) emit(doc.type, doc.n); }', reduce: '_sum' },
    by_tag: { map: 'function (doc) { if (doc.type) { emit([doc.type, doc.n], 1); emit(["all", doc.n % 7, doc._id], doc.n); } }', reduce: '_sum' },
    counted: { map: 'function (doc) { if (doc.type) emit(doc._id, null); }', reduce: '_count' },
  },
};

/** Writes N documents (`_bulk_docs`, 5000 at a time); answers documents/s. */
async function load(url: string, auth: string, db: string): Promise<number> {
  await call(url, auth, `/${db}`, 'PUT');
  const started = performance.now();
  for (let i = 0; i < DOCS; i += 5000) {
    const docs = Array.from({ length: Math.min(5000, DOCS - i) }, (_, j) => ({ _id: `doc${String(i + j).padStart(7, '0')}`, type: `t${(i + j) % 50}`, n: (i + j) % 100, text: 'lorem ipsum dolor sit amet' }));
    await call(url, auth, `/${db}/_bulk_docs`, 'POST', { docs });
  }
  return DOCS / ((performance.now() - started) / 1000);
}

/**
 * Saves the design document and times the first query, which builds the index; answers documents/s.
 * CouchDB answers 500 `timeout` when a build outlasts its `[fabric] request_timeout` and goes on
 * building, so that answer is asked again.
 */
async function build(url: string, auth: string, db: string): Promise<number> {
  await call(url, auth, `/${db}/_design/bench`, 'PUT', DDOC);
  const started = performance.now();
  for (;;) {
    try {
      await call(url, auth, `/${db}/_design/bench/_view/by_type?limit=1&reduce=false`);
      return DOCS / ((performance.now() - started) / 1000);
    } catch (error) {
      if (!(error as Error).message.includes(': 500 {"error":"timeout"')) throw error;
    }
  }
}

/** Requests per second over DURATION (after a second of warm-up); non-2xx answers and errors fail the run. */
async function rps(url: string, auth: string | undefined): Promise<number> {
  const options = { url, connections: CONNECTIONS, timeout: 60, headers: auth ? { authorization: auth } : {} };
  await autocannon({ ...options, duration: 1 });
  const result = await autocannon({ ...options, duration: DURATION });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors (${result.timeouts} timeouts)`);
  return result.requests.average;
}

const QUERIES: [string, string][] = [
  ['map rows, key + limit 10', '/_design/bench/_view/by_type?key=%22t7%22&limit=10&reduce=false'],
  ['group=true _sum (50 groups)', '/_design/bench/_view/by_type?group=true'],
  ['whole-view _sum', '/_design/bench/_view/by_type'],
  [`group_level=1 _sum (${2 * DOCS} rows, 51 groups)`, '/_design/bench/_view/by_tag?group_level=1'],
  ['group_level=2 _sum, key range ["all"]..["all",{}]', '/_design/bench/_view/by_tag?group_level=2&start_key=%5B%22all%22%5D&end_key=%5B%22all%22%2C%7B%7D%5D'],
  ['key-range _sum ["all",2]..["all",4]', '/_design/bench/_view/by_tag?start_key=%5B%22all%22%2C2%5D&end_key=%5B%22all%22%2C4%5D'],
  ['whole-view _count (unique keys)', '/_design/bench/_view/counted'],
  ['map rows, total_rows + limit 10', '/_design/bench/_view/counted?limit=10&reduce=false'],
  ['one document (GET /db/doc)', '/doc0000042'],
];

/** One measure of one server: its result and the baseline of the same run it is divided by. */
interface Measure {
  name: string;
  value: number;
  baseline: number;
}

async function measureTarget(label: string, url: string, auth: string): Promise<{ lines: string[]; measures: Measure[] }> {
  const db = `views-bench-${randomBytes(3).toString('hex')}`;
  const lines: string[] = [];
  const measures: Measure[] = [];
  const written = await load(url, auth, db);
  const built = await build(url, auth, db);
  lines.push(`| ${label} | index build, ${DOCS} docs, three views | ${built.toFixed(0)} docs/s | ${(built / written).toFixed(2)}× _bulk_docs write (${written.toFixed(0)} docs/s) |`);
  measures.push({ name: 'index build (docs/s; baseline: _bulk_docs write)', value: built, baseline: written });
  for (const [name, path] of QUERIES) {
    const size = (await call(url, auth, `/${db}${path}`)).bytes;
    const baseline = await start([BASELINE, String(size)], {}, /baseline listening on (http:\/\/\S+)\n/);
    const bare = await rps(baseline.url, undefined);
    await baseline.stop();
    const measured = await rps(`${url}/${db}${path}`, auth);
    lines.push(`| ${label} | ${name} (${size} B) | ${measured.toFixed(0)} req/s | ${(measured / bare).toFixed(2)}× bare node:http (${bare.toFixed(0)} req/s) |`);
    measures.push({ name, value: measured, baseline: bare });
  }
  await call(url, auth, `/${db}`, 'DELETE');
  return { lines, measures };
}

/**
 * Divan ÷ the other server per measure, plain and with each result first divided by its own
 * baseline: the two servers run one after the other, so on a shared machine the second column
 * takes out how much of the machine each one had.
 */
function comparison(mine: Measure[], theirs: Measure[]): string {
  const lines = ['| measure | Divan ÷ other | Divan ÷ other, each over its baseline |', '|---|---|---|'];
  for (const [i, measure] of mine.entries()) {
    const other = theirs[i]!;
    lines.push(`| ${measure.name} | ${(measure.value / other.value).toFixed(2)} | ${(measure.value / measure.baseline / (other.value / other.baseline)).toFixed(2)} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-views-'));
  const ini = join(data, 'bench.ini');
  writeFileSync(ini, '[log]\nlevel = warning\n');
  const password = randomBytes(8).toString('hex');
  const divan = await start([MAIN, '--port', '0', '--data', data, '--config', ini], { COUCHDB_USER: 'admin', COUCHDB_PASSWORD: password }, /Divan listening on (http:\/\/\S+)\n/);
  const lines = ['| server | measure | result | ratio to baseline (same run) |', '|---|---|---|---|'];
  let compared = '';
  try {
    const mine = await measureTarget('Divan (SQLite)', divan.url, `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`);
    lines.push(...mine.lines);
    const compare = flag('--compare');
    const admin = flag('--admin');
    if (compare && admin) {
      const theirs = await measureTarget(new URL(compare).host, compare.replace(/\/$/, ''), `Basic ${Buffer.from(admin).toString('base64')}`);
      lines.push(...theirs.lines);
      compared = `\n\n${comparison(mine.measures, theirs.measures)}`;
    }
  } finally {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  }
  const table = `${lines.join('\n')}${compared}`;
  process.stdout.write(`${table}\n`);
  writeFileSync(join(ROOT, 'bench', 'views-results.md'), `# View benchmark (${new Date().toISOString()}, ${DOCS} documents)\n\n${table}\n`);
}

await main();
