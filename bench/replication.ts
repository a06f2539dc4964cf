/**
 * Replication throughput between two real Divan servers: 10 000 documents, one in ten with a
 * 100 KB attachment, copied from server A to server B (a) by Divan's replicator (`POST
 * /_replicate` on A, one-shot) and (b) in the same run by PouchDB 9's replicator (the baseline:
 * a CouchDB-protocol replicator driven from this process, HTTP to HTTP), each into a fresh target
 * database. Reports documents per second and the ratio Divan / PouchDB. CouchDB 3.5 is measured
 * too when `COUCHDB_URL` (with admin credentials) names a reachable server.
 * Run: `npm run build && node dist/bench/replication.js` (BENCH_DOCS, BENCH_ATTACHMENT_KB to vary).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import PouchDB from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import replication from 'pouchdb-replication';

PouchDB.plugin(httpAdapter).plugin(replication);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCS = Number(process.env['BENCH_DOCS'] ?? 10000);
const ATTACHMENT_KB = Number(process.env['BENCH_ATTACHMENT_KB'] ?? 100);
const USER = 'bench';
const PASSWORD = 'bench-pass';

interface Server {
  url: string;
  stop(): Promise<void>;
}

function startDivan(name: string): Promise<Server> {
  const data = mkdtempSync(join(tmpdir(), `divan-bench-${name}-`));
  writeFileSync(join(data, 'admin.ini'), `[admins]\n${USER} = ${PASSWORD}\n[log]\nlevel = warning\n`);
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', join(data, 'admin.ini')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Divan listening on (http:\/\/\S+)\/\n/.exec(out);
      if (match) {
        resolve({ url: match[1]!, stop: async () => (child.kill('SIGTERM'), await exited, rmSync(data, { recursive: true, force: true })) });
      }
    });
    child.once('exit', (code) => reject(new Error(`divan exited with ${code}`)));
  });
}

const withCredentials = (url: string, user = USER, password = PASSWORD): string => url.replace('://', `://${user}:${password}@`);

async function call(url: string, method: string, body?: unknown): Promise<any> {
  const parsed = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`;
  parsed.username = '';
  parsed.password = '';
  const response = await fetch(parsed, { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  if (response.status >= 400 && response.status !== 412) throw new Error(`${method} ${parsed.pathname}: ${response.status} ${text.slice(0, 200)}`);
  return text === '' ? undefined : JSON.parse(text);
}

async function seed(dbUrl: string): Promise<number> {
  await call(dbUrl, 'PUT');
  const blob = Buffer.alloc(ATTACHMENT_KB * 1024);
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 31 + 7) % 256;
  const data = blob.toString('base64');
  let bytes = 0;
  for (let start = 0; start < DOCS; start += 250) {
    const docs = Array.from({ length: Math.min(250, DOCS - start) }, (_, k) => {
      const n = start + k;
      const doc: Record<string, unknown> = { _id: `doc-${String(n).padStart(6, '0')}`, n, title: `document ${n}`, tags: ['a', 'b', String(n % 7)] };
      if (ATTACHMENT_KB > 0 && n % 10 === 0) {
        doc['_attachments'] = { 'blob.bin': { content_type: 'application/octet-stream', data } };
        bytes += blob.length;
      }
      return doc;
    });
    await call(`${dbUrl}/_bulk_docs`, 'POST', { docs });
  }
  return bytes;
}

async function timed(label: string, run: () => Promise<void>, verify: () => Promise<number>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const count = await verify();
  if (count !== DOCS) throw new Error(`${label}: ${count} documents arrived, not ${DOCS}`);
  const rate = DOCS / seconds;
  console.log(`${label.padEnd(28)} ${seconds.toFixed(2).padStart(7)} s  ${rate.toFixed(0).padStart(6)} docs/s`);
  return rate;
}

async function main(): Promise<void> {
  const [a, b] = await Promise.all([startDivan('a'), startDivan('b')]);
  try {
    const source = withCredentials(`${a.url}/src`);
    const bytes = await seed(source);
    console.log(`${DOCS} documents, ${ATTACHMENT_KB > 0 ? `${DOCS / 10} with a ${ATTACHMENT_KB} KB attachment (${(bytes / 1048576).toFixed(0)} MiB)` : 'no attachments'}, server A -> server B`);
    const docCount = (db: string) => async (): Promise<number> => (await call(withCredentials(`${b.url}/${db}`), 'GET')).doc_count as number;
    const pouch = await timed('PouchDB 9 (baseline)', async () => {
      const target = withCredentials(`${b.url}/pouch`);
      await call(target, 'PUT');
      await new PouchDB(source).replicate.to(new PouchDB(target), { batch_size: 100 });
    }, docCount('pouch'));
    const divan = await timed('Divan _replicate', async () => {
      const result = await call(withCredentials(`${a.url}/_replicate`), 'POST', { source, target: withCredentials(`${b.url}/divan`), create_target: true });
      if (result.ok !== true) throw new Error(JSON.stringify(result));
    }, docCount('divan'));
    console.log(`ratio Divan / PouchDB: ${(divan / pouch).toFixed(2)}`);
    const couch = process.env['COUCHDB_URL'];
    if (couch) {
      const rate = await timed('CouchDB _replicate', async () => {
        await call(`${couch}/_replicate`, 'POST', { source, target: withCredentials(`${b.url}/couch`), create_target: true });
      }, docCount('couch'));
      console.log(`ratio Divan / CouchDB: ${(divan / rate).toFixed(2)}`);
    } else {
      console.log('CouchDB: not measured (set COUCHDB_URL=http://admin:pass@host:port to a CouchDB that can reach these servers)');
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

await main();
