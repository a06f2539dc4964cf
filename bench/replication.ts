/**
 * Replication throughput: 10 000 documents, one in ten with a 100 KB attachment, copied by a
 * one-shot `_replicate` into a fresh target database each time, documents per second.
 *
 * - Divan → Divan: two real Divan binaries (A, B), the job on A; the peak RSS growth of A during the
 *   job is shown (sampled from /proc every 100 ms).
 * - PouchDB 9's replicator A → B (driven from this process), unless `--no-pouch`.
 * - With `--couchdb=URL` (or `COUCHDB_URL`; admin credentials in the URL, e.g.
 *   http://admin:pass@127.0.0.1:5984): the same job run by CouchDB, CouchDB → CouchDB on that server;
 *   CouchDB's replicator between the two Divans; and the interoperability runs CouchDB → Divan (job on
 *   B) and Divan → CouchDB (job on A), each checked: every document arrived and every attachment has
 *   the source's digest and length, a few compared byte for byte. Only databases named `bench-…`
 *   are created on the CouchDB, none is deleted (a source already seeded is reused).
 *
 * Run: `npm run bench:replication -- --no-pouch --couchdb=http://admin:pass@127.0.0.1:5984`
 * (BENCH_DOCS, BENCH_ATTACHMENT_KB vary the data; DIVAN_MAIN runs another build of the server).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import PouchDB from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import replication from 'pouchdb-replication';

PouchDB.plugin(httpAdapter).plugin(replication);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = process.env['DIVAN_MAIN'] ?? join(ROOT, 'dist', 'src', 'main.js');
const DOCS = Number(process.env['BENCH_DOCS'] ?? 10000);
const ATTACHMENT_KB = Number(process.env['BENCH_ATTACHMENT_KB'] ?? 100);
const COUCH = process.argv.find((arg) => arg.startsWith('--couchdb='))?.slice('--couchdb='.length) ?? process.env['COUCHDB_URL'];
const POUCH = !process.argv.includes('--no-pouch');
const RUN = Date.now().toString(36);
const USER = 'bench';
const PASSWORD = 'bench-pass';

interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function startDivan(name: string): Promise<Server> {
  const data = mkdtempSync(join(tmpdir(), `divan-bench-${name}-`));
  writeFileSync(join(data, 'admin.ini'), `[admins]\n${USER} = ${PASSWORD}\n[log]\nlevel = warning\n`);
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--data', data, '--config', join(data, 'admin.ini')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Divan listening on (http:\/\/\S+)\/\n/.exec(out);
      if (match) {
        resolve({ url: match[1]!, pid: child.pid!, stop: async () => (child.kill('SIGTERM'), await exited, rmSync(data, { recursive: true, force: true })) });
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

async function raw(url: string): Promise<Buffer> {
  const parsed = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`;
  parsed.username = '';
  parsed.password = '';
  return Buffer.from(await (await fetch(parsed, { headers: { Authorization: auth } })).arrayBuffer());
}

function blobBytes(): Buffer {
  const blob = Buffer.alloc(ATTACHMENT_KB * 1024);
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 31 + 7) % 256;
  return blob;
}

async function seed(dbUrl: string): Promise<number> {
  const info = await call(dbUrl, 'GET').catch(() => undefined);
  if (info?.doc_count === DOCS) return DOCS / 10;
  await call(dbUrl, 'PUT');
  const data = blobBytes().toString('base64');
  let attached = 0;
  for (let start = 0; start < DOCS; start += 250) {
    const docs = Array.from({ length: Math.min(250, DOCS - start) }, (_, k) => {
      const n = start + k;
      const doc: Record<string, unknown> = { _id: `doc-${String(n).padStart(6, '0')}`, n, title: `document ${n}`, tags: ['a', 'b', String(n % 7)] };
      if (ATTACHMENT_KB > 0 && n % 10 === 0) {
        doc['_attachments'] = { 'blob.bin': { content_type: 'application/octet-stream', data } };
        attached++;
      }
      return doc;
    });
    await call(`${dbUrl}/_bulk_docs`, 'POST', { docs });
  }
  return attached;
}

/** Every document arrived, every attachment has the blob's digest and length, three byte for byte. */
async function verify(dbUrl: string): Promise<number> {
  const expected = `md5-${createHash('md5').update(blobBytes()).digest('base64')}`;
  const rows = (await call(`${dbUrl}/_all_docs?include_docs=true`, 'GET')).rows as { id: string; doc: any }[];
  const attached = rows.filter((row) => row.doc._attachments);
  for (const row of attached) {
    const stub = row.doc._attachments['blob.bin'];
    if (stub.digest !== expected || stub.length !== ATTACHMENT_KB * 1024) throw new Error(`${dbUrl}: ${row.id} has ${JSON.stringify(stub)}`);
  }
  if (ATTACHMENT_KB > 0 && attached.length !== DOCS / 10) throw new Error(`${dbUrl}: ${attached.length} documents with an attachment`);
  for (const row of attached.slice(0, 3)) if (!(await raw(`${dbUrl}/${row.id}/blob.bin`)).equals(blobBytes())) throw new Error(`${dbUrl}: ${row.id} bytes differ`);
  return rows.length;
}

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

async function timed(label: string, run: () => Promise<void>, target: string, watch?: number): Promise<number> {
  // The seeding's (or the previous job's) dirty pages are written out first, so their writeback
  // does not slow the fsyncs of the job measured.
  execFileSync('sync');
  const before = watch ? rssOf(watch) : 0;
  let peak = before;
  const sampler = watch ? setInterval(() => (peak = Math.max(peak, rssOf(watch))), 100) : undefined;
  const started = process.hrtime.bigint();
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const count = await verify(target);
  if (count !== DOCS) throw new Error(`${label}: ${count} documents arrived, not ${DOCS}`);
  const rate = DOCS / seconds;
  const memory = watch ? `  replicating server RSS +${((peak - before) / 1048576).toFixed(0)} MiB (peak ${(peak / 1048576).toFixed(0)} MiB)` : '';
  console.log(`${label.padEnd(34)} ${seconds.toFixed(2).padStart(7)} s  ${rate.toFixed(0).padStart(6)} docs/s${memory}`);
  return rate;
}

async function replicate(server: string, source: string, target: string): Promise<void> {
  const result = await call(`${server}/_replicate`, 'POST', { source, target, create_target: true });
  if (result.ok !== true || result.history?.[0]?.doc_write_failures !== 0) throw new Error(JSON.stringify(result));
}

async function withCouch(couch: string, a: Server, b: Server, source: string, divan: number): Promise<void> {
  const couchSource = `${couch}/bench-src-${DOCS}-${ATTACHMENT_KB}`;
  await seed(couchSource);
  const couchRate = await timed('CouchDB -> CouchDB (CouchDB job)', () => replicate(couch, couchSource, `${couch}/bench-dst-${RUN}`), `${couch}/bench-dst-${RUN}`);
  console.log(`ratio Divan -> Divan / CouchDB -> CouchDB: ${(divan / couchRate).toFixed(2)}`);
  const target = withCredentials(`${b.url}/couch`);
  const viaCouch = await timed('Divan -> Divan (CouchDB job)', () => replicate(couch, source, target), target);
  console.log(`ratio Divan job / CouchDB job, same ends: ${(divan / viaCouch).toFixed(2)}`);
  const pulled = withCredentials(`${b.url}/from-couch`);
  await timed('CouchDB -> Divan (Divan job)', () => replicate(withCredentials(b.url), couchSource, pulled), pulled, b.pid);
  const pushed = `${couch}/bench-from-divan-${RUN}`;
  await timed('Divan -> CouchDB (Divan job)', () => replicate(withCredentials(a.url), source, pushed), pushed, a.pid);
}

async function main(): Promise<void> {
  const [a, b] = await Promise.all([startDivan('a'), startDivan('b')]);
  try {
    const source = withCredentials(`${a.url}/src`);
    const attached = await seed(source);
    console.log(`${DOCS} documents, ${ATTACHMENT_KB > 0 ? `${attached} with a ${ATTACHMENT_KB} KB attachment` : 'no attachments'}; server ${MAIN}`);
    const target = withCredentials(`${b.url}/divan`);
    const divan = await timed('Divan -> Divan (Divan job)', () => replicate(withCredentials(a.url), source, target), target, a.pid);
    if (POUCH) {
      const pouchTarget = withCredentials(`${b.url}/pouch`);
      const pouch = await timed('PouchDB 9 (baseline)', async () => {
        await call(pouchTarget, 'PUT');
        await new PouchDB(source).replicate.to(new PouchDB(pouchTarget), { batch_size: 100 });
      }, pouchTarget);
      console.log(`ratio Divan / PouchDB: ${(divan / pouch).toFixed(2)}`);
    }
    if (COUCH) await withCouch(COUCH.replace(/\/$/, ''), a, b, source, divan);
    else console.log('CouchDB: not measured (--couchdb=http://admin:pass@host:port names a CouchDB that can reach these servers)');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

await main();
