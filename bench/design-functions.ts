/**
 * `npm run bench:design [-- --duration S] [-- --compare http://admin:pass@host:port]`
 *
 * Design functions under load: a `_show` of one document, a `_list` of 100 view rows,
 * and an `_update` that creates a document per request (POST, no id, so no conflicts), each in
 * req/s with 8 connections. The baseline, measured in the same run, is a bare node:http server;
 * each figure is also given as a share of it. With `--compare` the same scenarios run against
 * another server (a CouchDB 3.5) and a column gives Divan ÷ it. Each server's CPU per request (its
 * process and descendants, Linux `/proc`; the other server's found by its port) is given too: on a
 * shared machine the req/s of two servers measured minutes apart say how much of the machine each
 * got, the CPU says what each request cost. Writes bench/design-results.md.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, cpuSeconds, listeningPid, load, startProcess } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ADMIN = { name: 'admin', password: 'bench-pass' };
const CONNECTIONS = 8;
const DB = 'bench_design';

function option(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}
const DURATION = Number(option('--duration') ?? 5);

interface Target {
  url: string;
  headers: Record<string, string>;
  /** The server's process, for its CPU time. */
  pid?: number;
}

interface Rate {
  rps: number;
  /** Server CPU milliseconds per request; undefined without the server's process. */
  cpuMs?: number;
}

const DDOC = {
  views: { by_n: { map: 'function (doc) { if (typeof doc.n === "number") emit(doc.n, doc.title); }' } },
  shows: { title: 'function (doc, req) { return "<h1>" + doc.title + "</h1>"; }' },
  lists: { rows: 'function (head, req) { start({ headers: { "Content-Type": "text/csv" } }); var row; while (row = getRow()) send(row.id + "," + row.key + "," + row.value + "\\n"); }' },
  updates: { stamp: 'function (doc, req) { return [{ _id: req.uuid, at: req.body }, "ok"]; }' },
};

const SCENARIOS: [string, string, string][] = [
  ['_show (one document)', 'GET', `/${DB}/_design/app/_show/title/d00042`],
  ['_list (100 rows)', 'GET', `/${DB}/_design/app/_list/rows/by_n?limit=100`],
  ['_update (POST, creates a document)', 'POST', `/${DB}/_design/app/_update/stamp`],
];

async function must(target: Target, path: string, method: string, body?: unknown): Promise<void> {
  const res = await call(target.url, path, { method, headers: { ...target.headers, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
}

async function rate(target: Target, method: string, path: string): Promise<Rate> {
  const options = { url: target.url + path, method: method as 'GET', headers: { ...target.headers, 'Content-Type': 'text/plain' }, body: method === 'POST' ? 'now' : undefined, connections: CONNECTIONS, timeout: 120 };
  await load({ ...options, duration: 1 });
  const cpuBefore = target.pid === undefined ? 0 : cpuSeconds(target.pid);
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx + measured.errors > 0) throw new Error(`${path}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
  const cpuMs = target.pid === undefined ? undefined : ((cpuSeconds(target.pid) - cpuBefore) * 1000) / measured.requests;
  return { rps: measured.rps, ...(cpuMs === undefined ? {} : { cpuMs }) };
}

async function measure(target: Target): Promise<Rate[]> {
  await call(target.url, `/${DB}`, { method: 'DELETE', headers: target.headers });
  await must(target, `/${DB}`, 'PUT');
  await must(target, `/${DB}/_design/app`, 'PUT', DDOC);
  const docs = Array.from({ length: 1000 }, (_, n) => ({ _id: `d${String(n).padStart(5, '0')}`, n, title: `Title ${n}` }));
  await must(target, `/${DB}/_bulk_docs`, 'POST', { docs });
  const figures: Rate[] = [];
  for (const [, method, path] of SCENARIOS) figures.push(await rate(target, method, path));
  await must(target, `/${DB}`, 'DELETE');
  return figures;
}

async function bareRate(): Promise<number> {
  const baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), '150'], {}, /baseline listening on (\S+)/);
  try {
    return (await rate({ url: baseline.url, headers: {} }, 'GET', '/')).rps;
  } finally {
    await baseline.stop();
  }
}

function otherTarget(compare: string): Target {
  const url = new URL(compare);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  const pid = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) ? listeningPid(url.port || '80') : undefined;
  return { url: `${url.protocol}//${url.host}`, headers: { Authorization: auth }, ...(pid === undefined ? {} : { pid }) };
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-design-'));
  const quiet = join(data, 'quiet.ini');
  writeFileSync(quiet, '[log]\nlevel = warning\n');
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', quiet], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  const compare = option('--compare');
  try {
    const bare = await bareRate();
    const mine = await measure({ url: divan.url, pid: divan.pid, headers: { Authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` } });
    const theirs = compare === undefined ? undefined : await measure(otherTarget(compare));
    const head = ['scenario', 'Divan req/s', 'Divan ÷ bare node:http', 'Divan CPU ms/req', ...(theirs ? ['other req/s', 'other CPU ms/req', 'Divan ÷ other (req/s)', 'other ÷ Divan (CPU per request)'] : [])];
    const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, `| bare node:http (baseline) | ${bare.toFixed(0)} | 1.00 |${' |'.repeat(head.length - 3)}`];
    const ms = (rate: Rate): string => (rate.cpuMs === undefined ? '' : rate.cpuMs.toFixed(3));
    SCENARIOS.forEach(([scenario], i) => {
      const [own, other] = [mine[i]!, theirs?.[i]];
      const cpuRatio = other?.cpuMs !== undefined && own.cpuMs !== undefined ? (other.cpuMs / own.cpuMs).toFixed(2) : '';
      const cells = [scenario, own.rps.toFixed(0), (own.rps / bare).toFixed(3), ms(own), ...(other ? [other.rps.toFixed(0), ms(other), (own.rps / other.rps).toFixed(2), cpuRatio] : [])];
      lines.push(`| ${cells.join(' | ')} |`);
    });
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`;
    const text = `# Design functions benchmark\n\n${new Date().toISOString()}, Divan ${version}, ${machine} (shared with other work), storage sqlite, ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}${compare ? `, compared with ${new URL(compare).host}` : ''}.\n\n${lines.join('\n')}\n`;
    process.stdout.write(`\n${text}`);
    writeFileSync(join(ROOT, 'bench', 'design-results.md'), text);
  } finally {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

await main();
