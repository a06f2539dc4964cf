/**
 * `npm run bench:partitions [-- --partitions 1000] [-- --per-partition 100] [-- --duration S]
 *   [-- --storage postgres --postgres-url URL] [-- --compare http://admin:pass@host:port]`
 *
 * Partition queries in a partitioned database holding 1 partition and in one holding
 * `--partitions` partitions, the queried partition the same (`--per-partition` documents) in both:
 * `_all_docs`, a map view, a `_count` reduce, `_find` through a partitioned json index and `_find`
 * without one (the partition's `_all_docs` range). A partition query reads one range of an index,
 * so each figure should not depend on the other partitions: the last column gives the ratio (1.00:
 * the same cost), each the mean of two runs in the order 1, many, many, 1. The baseline, measured in
 * the same run, is a bare node:http server. With `--compare` the same databases (`?partitioned=true`),
 * documents, view and index are made on the other server (a CouchDB), each scenario runs on both
 * servers (Divan 1, many, other 1, many, other many, 1, Divan many, 1) and columns give Divan ÷ the other.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, postgresBenchSchema, startProcess } from './bench-support.js';

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
  label: string;
  url: string;
  headers: Record<string, string>;
}

async function must(target: Target, path: string, method = 'GET', body?: unknown): Promise<string> {
  const res = await call(target.url, path, { method, headers: { ...target.headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${target.label} ${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return res.body;
}

function partitionName(n: number): string {
  return `p${String(n).padStart(4, '0')}`;
}

/** A partitioned database of `partitions` partitions of `PER_PARTITION` documents, its view and json index built. */
async function fill(target: Target, db: string, partitions: number): Promise<void> {
  // A database left by an interrupted run on the compared server would make the PUT fail.
  await call(target.url, `/${db}`, { method: 'DELETE', headers: target.headers });
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
    timeout: 60,
    ...(scenario.body === undefined ? {} : { method: 'POST' as const, body: JSON.stringify(scenario.body) }),
  };
  await load({ ...options, duration: 1 });
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx > 0 || measured.errors > 0) throw new Error(`${target.label} ${scenario.name}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
  return measured.rps;
}

async function bareRate(): Promise<number> {
  const baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), '150'], {}, /baseline listening on (\S+)/);
  try {
    return await rate({ label: 'bare', url: baseline.url, headers: {} }, { name: 'bare', path: '/' });
  } finally {
    await baseline.stop();
  }
}

const schema = option('--storage') === 'postgres' ? postgresBenchSchema('partitions', option('--postgres-url')) : undefined;

function configFile(data: string): string {
  const file = join(data, 'bench.ini');
  writeFileSync(file, `[log]\nlevel = warning\n${schema?.ini ?? ''}`);
  return file;
}

/** One server under test: its two databases, filled. */
interface Server {
  target: Target;
  one: Scenario[];
  many: Scenario[];
  fillSeconds: number;
}

/** Mean req/s of one scenario on the 1-partition (`small`) and the many-partition (`large`) database. */
interface Rates {
  small: number;
  large: number;
}

async function prepare(target: Target): Promise<Server> {
  const one = `partitions-bench-one-${process.pid}`;
  const many = `partitions-bench-many-${process.pid}`;
  await fill(target, one, 1);
  const filled = performance.now();
  await fill(target, many, PARTITIONS);
  const fillSeconds = (performance.now() - filled) / 1000;
  process.stderr.write(`${target.label}: filled ${PARTITIONS * PER_PARTITION} documents with the view and index in ${fillSeconds.toFixed(0)} s\n`);
  return { target, one: scenarios(one), many: scenarios(many), fillSeconds };
}

/**
 * Scenario `i` on every server, each figure the mean of two runs. Measured in the order small,
 * large on every server, then large, small on them in reverse: a machine getting busier or quieter
 * during the run shifts every figure alike.
 */
async function measureScenario(servers: Server[], i: number): Promise<Rates[]> {
  const rates = servers.map(() => ({ small: 0, large: 0 }));
  for (const [s, server] of servers.entries()) {
    rates[s]!.small += await rate(server.target, server.one[i]!);
    rates[s]!.large += await rate(server.target, server.many[i]!);
  }
  for (const [s, server] of [...servers.entries()].reverse()) {
    rates[s]!.large += await rate(server.target, server.many[i]!);
    rates[s]!.small += await rate(server.target, server.one[i]!);
  }
  for (const [s, server] of servers.entries()) process.stderr.write(`${server.target.label}: ${server.one[i]!.name}: ${(rates[s]!.small / 2).toFixed(0)} / ${(rates[s]!.large / 2).toFixed(0)} req/s\n`);
  return rates.map(({ small, large }) => ({ small: small / 2, large: large / 2 }));
}

function table(names: string[], bare: number, figures: Rates[][], other: string | undefined): string {
  const perServer = (label: string): string[] => [`${label} 1 partition`, `${label} ${PARTITIONS} partitions`, `${label} ${PARTITIONS} ÷ 1`];
  const head = other === undefined
    ? ['scenario', '1 partition', `${PARTITIONS} partitions`, `${PARTITIONS} ÷ 1`]
    : ['scenario', ...perServer('Divan'), ...perServer(other), `Divan ÷ ${other}, 1 partition`, `Divan ÷ ${other}, ${PARTITIONS} partitions`];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, `| bare node:http | ${bare.toFixed(0)} req/s |${' |'.repeat(head.length - 2)}`];
  for (const [i, name] of names.entries()) {
    const rates = figures[i]!;
    const cells = rates.flatMap(({ small, large }) => [`${small.toFixed(0)} req/s`, `${large.toFixed(0)} req/s`, (large / small).toFixed(2)]);
    if (rates.length > 1) cells.push((rates[0]!.small / rates[1]!.small).toFixed(2), (rates[0]!.large / rates[1]!.large).toFixed(2));
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function otherTarget(compare: string): Target {
  const url = new URL(compare);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  return { label: 'CouchDB', url: `${url.protocol}//${url.host}`, headers: { Authorization: auth } };
}

/** What the compared server says of itself, for the results' header. */
async function describe(target: Target): Promise<string> {
  const welcome = JSON.parse(await must(target, '/')) as { couchdb?: string; version?: string; features?: string[] };
  const engine = welcome.features?.includes('quickjs') ? ', QuickJS' : '';
  return `compared with ${welcome.couchdb === 'Welcome' ? 'CouchDB' : 'a server'} ${welcome.version ?? '(no version)'}${engine} at ${target.url}`;
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-partitions-'));
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', configFile(data)], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  const target: Target = { label: 'Divan', url: divan.url, headers: { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } };
  const compare = option('--compare');
  const other = compare === undefined ? undefined : otherTarget(compare);
  const servers: Server[] = [];
  try {
    const started = performance.now();
    for (const server of other === undefined ? [target] : [target, other]) servers.push(await prepare(server));
    const bare = await bareRate();
    const figures: Rates[][] = [];
    for (const i of servers[0]!.one.keys()) figures.push(await measureScenario(servers, i));
    const minutes = (performance.now() - started) / 60_000;
    const storage = option('--storage') === 'postgres' ? 'postgres' : 'sqlite';
    const fills = servers.map((server) => `${server.target.label} ${server.fillSeconds.toFixed(0)} s`).join(', ');
    const compared = other === undefined ? '' : `, ${await describe(other)}`;
    const text = `# Partition queries\n\n${new Date().toISOString()}, storage ${storage}${compared}, ${PER_PARTITION} documents per partition (${PARTITIONS * PER_PARTITION} in the large database, filled with its view and index in ${fills}), ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}; the run took ${minutes.toFixed(1)} min.\n\n${table(servers[0]!.one.map((scenario) => scenario.name), bare, figures, other?.label)}\n`;
    process.stdout.write(`\n${text}`);
    writeFileSync(join(ROOT, 'bench', `partitions-results-${storage}.md`), text);
  } finally {
    if (other !== undefined) for (const db of ['one', 'many']) await call(other.url, `/partitions-bench-${db}-${process.pid}`, { method: 'DELETE', headers: other.headers }).catch(() => undefined);
    await divan.stop();
    await schema?.drop();
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
