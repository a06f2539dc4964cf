/**
 * `npm run bench:search [-- --quick] [-- --docs N] [-- --builds-only]`
 *
 * Full-text search (`_nouveau`) on the embedded SQLite store: the index build rate (documents/s)
 * for N documents (100 000 by default) of twelve words each from a 5 000-word vocabulary, with an
 * index function of the native subset and with one the sandbox runs (medians of three alternating
 * rounds), and queries per second (one common term, two terms with AND, a prefix). Ratios are to a
 * bare SQLite FTS5 table measured in the same run: the same texts inserted directly in transactions of 1 000,
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
/** Index builds only (no query rates): for comparing builds. */
const BUILDS_ONLY = argv.includes('--builds-only');
const DOCS = Number(argv.includes('--docs') ? argv[argv.indexOf('--docs') + 1] : QUICK ? 20_000 : 100_000);
const DURATION = QUICK ? 3 : 10;
const CONNECTIONS = 8;
const ROUNDS = QUICK ? 1 : 3;

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

/** An index function of the native subset (docs/search.md), and the same outside it: every document in the sandbox. */
const NATIVE_FUNCTION = (round: number) => `function (doc) { /* ${round} */ if (doc.txt) index("text", "txt", doc.txt); }`;
const SANDBOX_FUNCTION = (round: number) => `function (doc) { /* ${round} */ var text = doc.txt; if (text) index("text", "txt", text); }`;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type Json = (path: string, method?: string, body?: unknown) => Promise<unknown>;

function divanClient(url: string, auth: string): Json {
  return async (path, method = 'GET', body) => {
    const answer = await call(url, path, { method, headers: { authorization: auth, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 200)}`);
    return answer;
  };
}

async function load(json: Json): Promise<void> {
  await json('/bench', 'PUT');
  for (let i = 0; i < DOCS; i += 5000) {
    const docs = Array.from({ length: Math.min(5000, DOCS - i) }, (_, j) => ({ _id: `doc${String(i + j).padStart(7, '0')}`, txt: textOf(i + j) }));
    await json('/bench/_bulk_docs', 'POST', { docs });
  }
}

/** Builds a new index with `source` (design document `name`); answers documents/s. */
async function divanBuild(json: Json, name: string, source: string): Promise<number> {
  await json(`/bench/_design/${name}`, 'PUT', { nouveau: { t: { index: source } } });
  const started = performance.now();
  await json(`/bench/_design/${name}/_nouveau/t?q=txt:w1&limit=1`);
  return DOCS / ((performance.now() - started) / 1000);
}

interface Builds {
  bare: number[];
  native: number[];
  sandboxed: number[];
}

/** Builds in alternating rounds (bare table, native function, sandboxed function), so that a busy moment of the machine weighs on all three. */
async function builds(json: Json, data: string): Promise<Builds> {
  const rounds: Builds = { bare: [], native: [], sandboxed: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.bare.push(buildBaseline(join(data, `baseline-${round}.sqlite`)));
    rounds.native.push(await divanBuild(json, `n${round}`, NATIVE_FUNCTION(round)));
    rounds.sandboxed.push(await divanBuild(json, `s${round}`, SANDBOX_FUNCTION(round)));
  }
  return rounds;
}

async function queryRates(base: string, json: Json, auth: string, url: string): Promise<{ bare: { rate: number; failed: number }[]; divan: { rate: number; failed: number }[] }> {
  const bare: { rate: number; failed: number }[] = [];
  const baseline = await startProcess([BASELINE, base], {}, /baseline listening on (http:\/\/\S+)\n/);
  try {
    for (const query of QUERIES) bare.push(await rps(`${baseline.url}/?q=${encodeURIComponent(query.match)}`, {}));
  } finally {
    await baseline.stop();
  }
  await json('/bench/_design/n0/_nouveau/t?q=txt:w1&limit=1');
  const divan: { rate: number; failed: number }[] = [];
  for (const query of QUERIES) divan.push(await rps(`${url}/bench/_design/n0/_nouveau/t?q=${encodeURIComponent(query.q)}&update=false`, { authorization: auth }));
  return { bare, divan };
}

function buildLines(rounds: Builds): string[] {
  const bare = median(rounds.bare);
  const each = (rates: number[]) => rates.map((rate, i) => (rounds.bare[i]! / rate).toFixed(2)).join(', ');
  return [
    `| index build, function of the native subset | ${median(rounds.native).toFixed(0)} docs/s | ${bare.toFixed(0)} docs/s | ${(bare / median(rounds.native)).toFixed(2)}× slower (rounds: ${each(rounds.native)}) |`,
    `| index build, function run in the sandbox | ${median(rounds.sandboxed).toFixed(0)} docs/s | ${bare.toFixed(0)} docs/s | ${(bare / median(rounds.sandboxed)).toFixed(2)}× slower (rounds: ${each(rounds.sandboxed)}) |`,
  ];
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-search-'));
  const ini = join(data, 'bench.ini');
  writeFileSync(ini, '[log]\nlevel = warning\n');
  const password = randomBytes(8).toString('hex');
  const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
  const lines = ['| measure | Divan (SQLite) | bare FTS5 (same run) | ratio |', '|---|---|---|---|'];
  try {
    const divan = await startProcess([MAIN, '--port', '0', '--data', data, '--config', ini], { COUCHDB_USER: 'admin', COUCHDB_PASSWORD: password }, /Divan listening on (http:\/\/\S+)\n/);
    try {
      const json = divanClient(divan.url, auth);
      await load(json);
      lines.push(...buildLines(await builds(json, data)));
      const rates = BUILDS_ONLY ? { bare: [], divan: [] } : await queryRates(join(data, 'baseline-0.sqlite'), json, auth, divan.url);
      if (!BUILDS_ONLY) QUERIES.forEach((query, i) => {
        const [ours, bare] = [rates.divan[i]!, rates.bare[i]!];
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
  if (!BUILDS_ONLY) writeFileSync(join(ROOT, 'bench', 'search-results.md'), `# Search benchmark (${new Date().toISOString()}, ${DOCS} documents, median of ${ROUNDS} alternating rounds, ${machine})\n\n${table}\n`);
}

await main();
