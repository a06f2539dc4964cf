/**
 * `npm run bench:partitions [-- --partitions 1000] [-- --per-partition 100] [-- --duration S]
 *   [-- --storage postgres --postgres-url URL]`
 *
 * Partition queries in a partitioned database holding 1 partition and in one holding
 * `--partitions` partitions, the queried partition the same (`--per-partition` documents) in both:
 * `_all_docs`, a map view, a `_count` reduce, `_find` through a partitioned json index and `_find`
 * without one (the partition's `_all_docs` range). A partition query reads one range of an index,
 * so each figure should not depend on the other partitions: the last column gives the ratio (1.00:
 * the same cost), each the mean of two runs in the order 1, many, many, 1. The baseline, measured in
 * the same run, is a bare node:http server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, startProcess } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ADMIN = { name: 'admin', password: 'bench-pass' };

function option(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}

const PARTITIONS = Number(option('--partitions') ?? 1000);
const PER_PARTITION = Number(option('--per-partition') ?? 100);
const DURATION = Number(option('--duration') ?? 5);
const CONNECTIONS = 8;
/** The partition every query reads. */
const TARGET = 'p0000';

interface Target {
  url: string;
  headers: Record<string, string>;
}

async function must(target: Target, path: string, method = 'GET', body?: unknown): Promise<string> {
  const res = await call(target.url, path, { method, headers: { ...target.headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return res.body;
}

function partitionName(n: number): string {
  return `p${String(n).padStart(4, '0')}`;
}

/** A partitioned database of `partitions` partitions of `PER_PARTITION` documents, its view and json index built. */
async function fill(target: Target, db: string, partitions: number): Promise<void> {
  await must(target, `/${db}?partitioned=true`, 'PUT');
  let batch: object[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < PER_PARTITION; i++) batch.push({ _id: `${partitionName(p)}:doc-${String(i).padStart(6, '0')}`, n: i, tag: `t${i % 10}` });
    if (batch.length >= 1000 || p === partitions - 1) {
      await must(target, `/${db}/_bulk_docs`, 'POST', { docs: batch });
      batch = [];
    }
  }
  await must(target, `/${db}/_design/app`, 'PUT', { views: { by_n: { map: 'function (doc) { emit(doc.n, null); }', reduce: '_count' } } });
  await must(target, `/${db}/_index`, 'POST', { index: { fields: ['n'] }, ddoc: 'by-n', name: 'by-n' });
  // Build both indexes before measuring.
  await must(target, `/${db}/_partition/${TARGET}/_design/app/_view/by_n?limit=1`);
  await must(target, `/${db}/_partition/${TARGET}/_find`, 'POST', { selector: { n: { $gte: 0 } }, limit: 1 });
}

interface Scenario {
  name: string;
  path: string;
  body?: object;
}

function scenarios(db: string): Scenario[] {
  const base = `/${db}/_partition/${TARGET}`;
  return [
    { name: `_all_docs of the partition (${PER_PARTITION} rows)`, path: `${base}/_all_docs` },
    { name: `view rows of the partition (${PER_PARTITION} rows)`, path: `${base}/_design/app/_view/by_n?reduce=false` },
    { name: 'view `_count` of the partition', path: `${base}/_design/app/_view/by_n` },
    { name: '_find through the partitioned index (10 docs)', path: `${base}/_find`, body: { selector: { n: { $gte: 10, $lt: 20 } } } },
    { name: '_find without an index (partition range of _all_docs, 10 docs)', path: `${base}/_find`, body: { selector: { tag: 't3' }, limit: 10 } },
  ];
}

async function rate(target: Target, scenario: Scenario): Promise<number> {
  const options = {
    url: target.url + scenario.path,
    headers: { ...target.headers, 'Content-Type': 'application/json' },
    connections: CONNECTIONS,
    ...(scenario.body === undefined ? {} : { method: 'POST' as const, body: JSON.stringify(scenario.body) }),
  };
  await load({ ...options, duration: 1 });
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx > 0 || measured.errors > 0) throw new Error(`${scenario.name}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
  return measured.rps;
}

async function bareRate(): Promise<number> {
  const baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), '150'], {}, /baseline listening on (\S+)/);
  try {
    return await rate({ url: baseline.url, headers: {} }, { name: 'bare', path: '/' });
  } finally {
    await baseline.stop();
  }
}

function configFile(data: string): string {
  const file = join(data, 'bench.ini');
  const postgres = option('--storage') === 'postgres';
  const storage = postgres
    ? `[divan]\nstorage = postgres\npostgres_url = ${option('--postgres-url') ?? 'postgresql://postgres@127.0.0.1:5432/test'}\npostgres_schema = bench_partitions_${process.pid}\n`
    : '';
  writeFileSync(file, `[log]\nlevel = warning\n${storage}`);
  return file;
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-partitions-'));
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', configFile(data)], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  const target: Target = { url: divan.url, headers: { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } };
  try {
    const started = performance.now();
    await fill(target, 'one', 1);
    const filled = performance.now();
    await fill(target, 'many', PARTITIONS);
    const fillSeconds = (performance.now() - filled) / 1000;
    const bare = await bareRate();
    const lines = [`| scenario | 1 partition | ${PARTITIONS} partitions | ${PARTITIONS} ÷ 1 |`, '|---|---|---|---|', `| bare node:http | ${bare.toFixed(0)} req/s | | |`];
    const one = scenarios('one');
    const many = scenarios('many');
    for (const [i, scenario] of one.entries()) {
      // Measured in the order small, large, large, small: a machine getting busier or quieter during
      // the run shifts both figures alike.
      const small1 = await rate(target, scenario);
      const large1 = await rate(target, many[i]!);
      const large = (large1 + (await rate(target, many[i]!))) / 2;
      const small = (small1 + (await rate(target, scenario))) / 2;
      lines.push(`| ${scenario.name} | ${small.toFixed(0)} req/s | ${large.toFixed(0)} req/s | ${(large / small).toFixed(2)} |`);
    }
    const minutes = (performance.now() - started) / 60_000;
    const storage = option('--storage') === 'postgres' ? 'postgres' : 'sqlite';
    const text = `# Partition queries\n\n${new Date().toISOString()}, storage ${storage}, ${PER_PARTITION} documents per partition (${PARTITIONS * PER_PARTITION} in the large database, filled with its view and index in ${fillSeconds.toFixed(0)} s), ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}; the run took ${minutes.toFixed(1)} min.\n\n${lines.join('\n')}\n`;
    process.stdout.write(`\n${text}`);
    writeFileSync(join(ROOT, 'bench', `partitions-results-${storage}.md`), text);
  } finally {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
