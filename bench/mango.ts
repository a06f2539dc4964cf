/**
 * `npm run bench:mango [-- --quick] [-- --docs N] [-- --storage postgres --postgres-url URL]`
 *
 * `_find` through a json index on 100 000 documents (by default), against a bare node:http server
 * answering a body of the same size, in the same run (baseline before and after each scenario).
 * Also reported: how long the first query took to build the index, and a few full scans of the
 * same database without an index, for contrast. Results go to bench/mango-results.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, postgresBenchSchema, startProcess, type Measurement } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ADMIN = { name: 'admin', password: 'bench-pass' };
const AUTH = { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`, 'Content-Type': 'application/json' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };

function option(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}

const quick = process.argv.includes('--quick');
const DOCS = Number(option('--docs') ?? 100_000);
const DURATION = Number(option('--duration') ?? (quick ? 3 : 10));
const CONNECTIONS = Number(option('--connections') ?? 16);

const SCENARIOS: { name: string; body: object }[] = [
  { name: '$eq on an indexed field, 25 of 100 matches', body: { selector: { group: 421 }, limit: 25 } },
  { name: 'range on an indexed field, sorted desc, 10 results', body: { selector: { n: { $gte: 50_000, $lt: 50_010 } }, sort: [{ n: 'desc' }] } },
  { name: 'two-field index, $eq + range, fields projection', body: { selector: { group: 7, n: { $gt: 50_000 } }, fields: ['_id', 'n'], limit: 10 } },
];

async function seed(url: string): Promise<number> {
  await call(url, '/bench', { method: 'PUT', headers: AUTH });
  // Readable by anyone: the benchmark measures queries, not authentication.
  await call(url, '/bench/_security', { method: 'PUT', headers: AUTH, body: JSON.stringify({ admins: { names: [], roles: [] }, members: { names: [], roles: [] } }) });
  for (let start = 0; start < DOCS; start += 5000) {
    const docs = Array.from({ length: Math.min(5000, DOCS - start) }, (_, i) => {
      const n = start + i;
      return { _id: `doc-${String(n).padStart(7, '0')}`, n, group: n % 1000, name: `user ${n}`, tags: ['bench', n % 2 === 0 ? 'even' : 'odd'] };
    });
    const res = await call(url, '/bench/_bulk_docs', { method: 'POST', headers: AUTH, body: JSON.stringify({ docs }) });
    if (res.status !== 201) throw new Error(`_bulk_docs answered ${res.status}: ${res.body.slice(0, 200)}`);
  }
  for (const fields of [['group'], ['n'], ['group', 'n']]) {
    await call(url, '/bench/_index', { method: 'POST', headers: AUTH, body: JSON.stringify({ index: { fields }, ddoc: fields.join('-'), name: fields.join('-') }) });
  }
  const started = performance.now();
  for (const scenario of SCENARIOS) {
    const res = await call(url, '/bench/_find', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(scenario.body) });
    if (res.status !== 200 || JSON.parse(res.body).warning !== undefined) throw new Error(`${scenario.name}: ${res.status} ${res.body.slice(0, 300)}`);
  }
  return performance.now() - started;
}

async function fullScans(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await call(url, '/bench/_find', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ selector: { name: 'user 99999' } }) });
    times.push(performance.now() - started);
  }
  return times;
}

async function run(url: string, body: string): Promise<Measurement> {
  const options = { url: `${url}/bench/_find`, method: 'POST' as const, headers: JSON_HEADERS, body, connections: CONNECTIONS };
  await load({ ...options, duration: 1 });
  return load({ ...options, duration: DURATION });
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-mango-'));
  const quiet = join(data, 'quiet.ini');
  // No access log: the benchmark measures queries, not logging.
  writeFileSync(quiet, '[log]\nlevel = warning\n');
  const storage = ['--config', quiet, ...(schema === undefined ? [] : ['--config', writePostgresConfig(data, schema.ini)])];
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, ...storage], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  let baseline: Awaited<ReturnType<typeof startProcess>> | undefined;
  const lines: string[] = [];
  try {
    const buildMs = await seed(divan.url);
    const scans = await fullScans(divan.url);
    for (const scenario of SCENARIOS) {
      const body = JSON.stringify(scenario.body);
      const size = (await call(divan.url, '/bench/_find', { method: 'POST', headers: JSON_HEADERS, body })).body.length;
      baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), String(size)], {}, /baseline listening on (\S+)/);
      const before = await run(baseline.url, body);
      const measured = await run(divan.url, body);
      const afterRun = await run(baseline.url, body);
      await baseline.stop();
      baseline = undefined;
      const baselineRps = (before.rps + afterRun.rps) / 2;
      const errors = measured.non2xx + measured.errors > 0 ? ` (${measured.non2xx} non-2xx, ${measured.errors} errors)` : '';
      lines.push(`| ${scenario.name} | ${size} | ${measured.rps.toFixed(0)} | ${measured.p50} | ${measured.p99} | ${baselineRps.toFixed(0)} | ${(measured.rps / baselineRps).toFixed(3)}${errors} |`);
      process.stderr.write(`${lines[lines.length - 1]}\n`);
    }
    const header = `# Mango benchmark\n\n${new Date().toISOString()}, ${DOCS} documents, storage ${option('--storage') ?? 'sqlite'}, ${CONNECTIONS} connections, ${DURATION} s per run, Node ${process.version}. The baseline is a bare node:http server answering a body of the same size, measured just before and after each scenario.\n\n`;
    const table = ['| scenario | body bytes | req/s | p50 ms | p99 ms | baseline req/s | ratio |', '|---|---|---|---|---|---|---|', ...lines].join('\n');
    const notes = `\n\nFirst queries (building three json indexes over ${DOCS} documents from the change sequence): ${(buildMs / 1000).toFixed(1)} s. The same database without a usable index (full scan, CouchDB's warning): ${scans.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} per query.\n`;
    process.stdout.write(`\n${table}${notes}`);
    writeFileSync(join(ROOT, 'bench', 'mango-results.md'), `${header}${table}${notes}`);
  } finally {
    await baseline?.stop();
    await divan.stop();
    await schema?.drop();
    rmSync(data, { recursive: true, force: true });
  }
}

const schema = option('--storage') === 'postgres' ? postgresBenchSchema('mango', option('--postgres-url')) : undefined;

function writePostgresConfig(data: string, ini: string): string {
  const file = join(data, 'postgres.ini');
  writeFileSync(file, ini);
  return file;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
