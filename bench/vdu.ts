/**
 * `npm run bench:vdu [-- --rounds N] [-- --compare URL --admin user:pass]`
 *
 * Documents per second through `_bulk_docs` of 10 000 documents into a database with a typical
 * validate_doc_update function against one without, in the same run and against the same server,
 * alternating the two so that drift shows. The figure that matters is the ratio (goal: the
 * function costs less than 30 % of write throughput). `--compare` runs the same against another
 * CouchDB-compatible server (CouchDB 3.5) where one is available.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const DOCS = 10000;

/** What apps write: required fields, an owner check against userCtx, a type whitelist. */
const TYPICAL_VDU = `function (newDoc, oldDoc, userCtx, secObj) {
  if (newDoc._deleted) return;
  if (!newDoc.type) throw({forbidden: 'type is required'});
  if (['note', 'task', 'event'].indexOf(newDoc.type) < 0) throw({forbidden: 'unknown type ' + newDoc.type});
  if (typeof newDoc.title !== 'string' || newDoc.title.length > 200) throw({forbidden: 'title must be a short string'});
  if (oldDoc && oldDoc.owner !== newDoc.owner) throw({forbidden: 'owner cannot change'});
  if (newDoc.owner !== userCtx.name && userCtx.roles.indexOf('_admin') < 0) throw({unauthorized: 'not your document'});
}`;

const arg = (flag: string): string | undefined => {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
};

async function call(url: string, auth: string, path: string, method = 'GET', body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url + path, { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

function startDivan(data: string, admin: [string, string]): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--data', data], { env: { ...process.env, COUCHDB_USER: admin[0], COUCHDB_PASSWORD: admin[1] }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolveStart, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /Divan listening on (http:\/\/\S+)\n/.exec(out);
      if (match) resolveStart({ url: match[1]!.replace(/\/$/, ''), stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`divan exited with ${code}: ${out}`)));
  });
}

async function bulk(url: string, auth: string, db: string, round: number): Promise<number> {
  const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `r${round}-${String(i).padStart(5, '0')}`, type: 'note', title: `note ${i}`, owner: 'admin', body: 'x'.repeat(200) }));
  const started = performance.now();
  const res = await call(url, auth, `/${db}/_bulk_docs`, 'POST', { docs });
  const seconds = (performance.now() - started) / 1000;
  const rows = res.json as { ok?: boolean }[];
  if (res.status !== 201 || rows.filter((row) => row.ok).length !== DOCS) throw new Error(`${db}: ${res.status} ${JSON.stringify(rows.find((row) => !row.ok))}`);
  return DOCS / seconds;
}

async function measure(label: string, url: string, auth: string, rounds: number): Promise<void> {
  const suffix = randomBytes(4).toString('hex');
  const plain = `bench-plain-${suffix}`;
  const validated = `bench-vdu-${suffix}`;
  for (const db of [plain, validated]) await call(url, auth, `/${db}`, 'PUT');
  await call(url, auth, `/${validated}/_design/rules`, 'PUT', { validate_doc_update: TYPICAL_VDU });
  await bulk(url, auth, plain, -1);
  await bulk(url, auth, validated, -1);
  const with_: number[] = [];
  const without: number[] = [];
  for (let round = 0; round < rounds; round++) {
    without.push(await bulk(url, auth, plain, round));
    with_.push(await bulk(url, auth, validated, round));
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const ratio = median(with_) / median(without);
  console.log(`${label}: _bulk_docs of ${DOCS} docs, median of ${rounds} rounds`);
  console.log(`  without validate_doc_update: ${median(without).toFixed(0)} docs/s`);
  console.log(`  with a typical one:          ${median(with_).toFixed(0)} docs/s`);
  console.log(`  ratio ${ratio.toFixed(2)} (the function costs ${((1 - ratio) * 100).toFixed(0)} % of write throughput; goal < 30 %)`);
  for (const db of [plain, validated]) await call(url, auth, `/${db}`, 'DELETE');
}

const rounds = Number(arg('--rounds') ?? 5);
const data = mkdtempSync(join(tmpdir(), 'divan-bench-vdu-'));
const admin: [string, string] = ['admin', randomBytes(8).toString('hex')];
const divan = await startDivan(data, admin);
try {
  await measure('Divan', divan.url, `Basic ${Buffer.from(admin.join(':')).toString('base64')}`, rounds);
  const compare = arg('--compare');
  const compareAdmin = arg('--admin');
  if (compare && compareAdmin) await measure(new URL(compare).host, compare.replace(/\/$/, ''), `Basic ${Buffer.from(compareAdmin).toString('base64')}`, rounds);
} finally {
  divan.stop();
  rmSync(data, { recursive: true, force: true });
}
