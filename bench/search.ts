/**
 * `npm run bench:search [-- --quick] [-- --docs N]`
 *
 * Full-text search (`_nouveau`) on the embedded SQLite store: the index build rate (documents/s)
 * for N documents (100 000 by default) of twelve words each from a 5 000-word vocabulary, and
 * queries per second (one common term, two terms with AND, a prefix). Ratios are to a bare SQLite
 * FTS5 table measured in the same run: the same texts inserted directly in transactions of 1 000,
 * and the same MATCH queries (page of 25 by bm25 plus the total) answered by a bare node:http
 * server reading that table (search-baseline.ts). Results go to bench/search-results.md.
 */
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, startProcess } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const BASELINE = join(ROOT, 'dist', 'bench', 'search-baseline.js');

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const DOCS = Number(argv.includes('--docs') ? argv[argv.indexOf('--docs') + 1] : QUICK ? 20_000 : 100_000);
const DURATION = QUICK ? 3 : 10;
const CONNECTIONS = 8;

/** A deterministic text: twelve words, frequent words more often (w0 is the most common). */
function textOf(i: number): string {
  let seed = i * 2654435761;
  const words: string[] = [];
  for (let w = 0; w < 12; w++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    words.push(`w${Math.floor(5000 * (seed / 2147483648) ** 3).toString(36)}`);
  }
  return words.join(' ');
}

const QUERIES: { name: string; q: string; match: string }[] = [
  { name: 'one common term', q: 'txt:w1', match: '"w1"' },
  { name: 'two terms, AND', q: 'txt:w2 AND txt:w3', match: '"w2" AND "w3"' },
  { name: 'a prefix', q: 'txt:w1a*', match: '"w1a" *' },
];

/** Requests per second; a request that failed or ran past 30 s is reported, not counted. */
async function rps(url: string, headers: Record<string, string>): Promise<{ rate: number; failed: number }> {
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers, timeout: 30 });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers, timeout: 30 });
  return { rate: result.requests.average, failed: result.non2xx + result.errors + result.timeouts };
}

const rate = (measured: { rate: number; failed: number }): string => `${measured.rate.toFixed(0)} req/s${measured.failed > 0 ? ` (${measured.failed} failed or timed out)` : ''}`;

/** The baseline table, built directly; answers documents/s. */
function buildBaseline(file: string): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec("CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0')");
  const insert = db.prepare('INSERT INTO fts (rowid, body) VALUES (?, ?)');
  const started = performance.now();
  for (let i = 0; i < DOCS; i += 1000) db.transaction(() => { for (let j = i; j < Math.min(DOCS, i + 1000); j++) insert.run(j + 1, textOf(j)); })();
  const rate = DOCS / ((performance.now() - started) / 1000);
  db.close();
  return rate;
}

async function divanFigures(url: string, auth: string): Promise<{ build: number; queries: { rate: number; failed: number }[] }> {
  const json = async (path: string, method = 'GET', body?: unknown) => {
    const answer = await call(url, path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 200)}`);
    return answer;
  };
  await json('/bench', 'PUT');
  for (let i = 0; i < DOCS; i += 5000) {
    const docs = Array.from({ length: Math.min(5000, DOCS - i) }, (_, j) => ({ _id: `doc${String(i + j).padStart(7, '0')}`, txt: textOf(i + j) }));
    await json('/bench/_bulk_docs', 'POST', { docs });
  }
  await json('/bench/_design/s', 'PUT', { nouveau: { t: { index: 'function (doc) { if (doc.txt) index("text", "txt", doc.txt); }' } } });
  const started = performance.now();
  await json('/bench/_design/s/_nouveau/t?q=txt:w1&limit=1');
  const build = DOCS / ((performance.now() - started) / 1000);
  const queries: { rate: number; failed: number }[] = [];
  for (const query of QUERIES) queries.push(await rps(`${url}/bench/_design/s/_nouveau/t?q=${encodeURIComponent(query.q)}&update=false`, { authorization: auth }));
  return { build, queries };
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-search-'));
  const ini = join(data, 'bench.ini');
  writeFileSync(ini, '[log]\nlevel = warning\n');
  const password = randomBytes(8).toString('hex');
  const baselineFile = join(data, 'baseline.sqlite');
  const lines = ['| measure | Divan (SQLite) | bare FTS5 (same run) | ratio |', '|---|---|---|---|'];
  try {
    const baseBuild = buildBaseline(baselineFile);
    const baseline = await startProcess([BASELINE, baselineFile], {}, /baseline listening on (http:\/\/\S+)\n/);
    const baseQueries: { rate: number; failed: number }[] = [];
    try {
      for (const query of QUERIES) baseQueries.push(await rps(`${baseline.url}/?q=${encodeURIComponent(query.match)}`, {}));
    } finally {
      await baseline.stop();
    }
    const divan = await startProcess([MAIN, '--port', '0', '--data', data, '--config', ini], { COUCHDB_USER: 'admin', COUCHDB_PASSWORD: password }, /Divan listening on (http:\/\/\S+)\n/);
    try {
      const figures = await divanFigures(divan.url, `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`);
      lines.push(`| index build | ${figures.build.toFixed(0)} docs/s | ${baseBuild.toFixed(0)} docs/s | ${(baseBuild / figures.build).toFixed(2)}× slower |`);
      QUERIES.forEach((query, i) => {
        const [ours, bare] = [figures.queries[i]!, baseQueries[i]!];
        lines.push(`| ${query.name} (\`${query.q}\`) | ${rate(ours)} | ${rate(bare)} | ${(bare.rate / ours.rate).toFixed(2)}× slower |`);
      });
    } finally {
      await divan.stop();
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
  writeFileSync(join(ROOT, 'bench', 'search-results.md'), `# Search benchmark (${new Date().toISOString()}, ${DOCS} documents, ${machine})\n\n${table}\n`);
}

await main();
