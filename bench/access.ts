/**
 * `npm run bench:access [-- --users 1000] [-- --per-user 100] [-- --duration S]
 *   [-- --storage postgres --postgres-url URL]`
 *
 * One user's `_changes` and `_all_docs` in a database with per-document access holding
 * `--users` × `--per-user` documents (each user's documents spread over the whole database), against
 * the same user's in a per-user database holding only their `--per-user` documents. A user's
 * listing reads the per-principal orders (`by-access-id`, `by-access-seq`), so it should cost about
 * what the per-user database costs: the last column is the ratio (1.00: the same), each figure the
 * mean of two runs in the order small, large, large, small. The baseline, measured in the same run,
 * is a bare node:http server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, postgresBenchSchema, startProcess } from './bench-support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ADMIN = { name: 'admin', password: 'bench-pass' };
const USER = { name: 'u0000', password: 'user-pass' };

function option(flag: string): string | undefined {
  const index = process.argv.indexOf(flag);
  return index === -1 ? undefined : process.argv[index + 1];
}

const USERS = Number(option('--users') ?? 1000);
const PER_USER = Number(option('--per-user') ?? 100);
const DURATION = Number(option('--duration') ?? 5);
const CONNECTIONS = 8;

async function must(url: string, auth: { name: string; password: string }, path: string, method = 'GET', body?: unknown): Promise<string> {
  const headers = { Authorization: basic(auth), 'Content-Type': 'application/json' };
  const res = await call(url, path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 200)}`);
  return res.body;
}

function basic(auth: { name: string; password: string }): string {
  return `Basic ${Buffer.from(`${auth.name}:${auth.password}`).toString('base64')}`;
}

function userName(n: number): string {
  return `u${String(n).padStart(4, '0')}`;
}

/** `db` with `users` users' documents, interleaved (document i belongs to user i mod users); `USER` a member. */
async function fill(url: string, db: string, users: number, access: boolean): Promise<void> {
  await must(url, ADMIN, `/${db}${access ? '?access=true' : ''}`, 'PUT');
  await must(url, ADMIN, `/${db}/_security`, 'PUT', { admins: { names: [], roles: [] }, members: { names: [USER.name], roles: [] } });
  let batch: object[] = [];
  const total = users * PER_USER;
  for (let i = 0; i < total; i++) {
    const owner = userName(i % users);
    batch.push({ _id: `${owner}:${String(i).padStart(7, '0')}`, _access: [owner], title: `todo ${i}`, done: i % 3 === 0 });
    if (batch.length >= 1000 || i === total - 1) {
      await must(url, ADMIN, `/${db}/_bulk_docs`, 'POST', { docs: batch });
      batch = [];
    }
  }
}

async function rate(url: string, headers: Record<string, string>, path: string): Promise<number> {
  const options = { url: url + path, headers, connections: CONNECTIONS };
  await load({ ...options, duration: 1 });
  const measured = await load({ ...options, duration: DURATION });
  if (measured.non2xx > 0 || measured.errors > 0) throw new Error(`${path}: ${measured.non2xx} non-2xx, ${measured.errors} errors`);
  return measured.rps;
}

async function bareRate(): Promise<number> {
  const baseline = await startProcess([join(ROOT, 'dist', 'bench', 'baseline-server.js'), '150'], {}, /baseline listening on (\S+)/);
  try {
    return await rate(baseline.url, {}, '/');
  } finally {
    await baseline.stop();
  }
}

const schema = option('--storage') === 'postgres' ? postgresBenchSchema('access', option('--postgres-url')) : undefined;

function configFile(data: string): string {
  const file = join(data, 'bench.ini');
  writeFileSync(file, `[log]\nlevel = warning\n[chttpd_auth]\niterations = 1000\n[chttpd_auth_lockout]\nmode = off\n${schema?.ini ?? ''}`);
  return file;
}

const SCENARIOS: [string, string][] = [
  ['`_changes`', '/_changes'],
  ['`_changes?include_docs=true`', '/_changes?include_docs=true'],
  ['`_all_docs`', '/_all_docs'],
  ['`_all_docs?include_docs=true&limit=20`', '/_all_docs?include_docs=true&limit=20'],
];

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-access-'));
  const divan = await startProcess([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', configFile(data)], { COUCHDB_USER: ADMIN.name, COUCHDB_PASSWORD: ADMIN.password }, /Divan listening on (\S+)/);
  try {
    const started = performance.now();
    await must(divan.url, ADMIN, `/_users/org.couchdb.user:${USER.name}`, 'PUT', { name: USER.name, password: USER.password, roles: [], type: 'user' });
    await fill(divan.url, 'own', 1, false);
    const filled = performance.now();
    await fill(divan.url, 'shared', USERS, true);
    const fillSeconds = (performance.now() - filled) / 1000;
    const headers = { Authorization: basic(USER) };
    const bare = await bareRate();
    const lines = [`| ${USER.name}'s | per-user database (${PER_USER} docs) | access database (${USERS * PER_USER} docs) | access ÷ per-user |`, '|---|---|---|---|', `| bare node:http | ${bare.toFixed(0)} req/s | | |`];
    for (const [name, path] of SCENARIOS) {
      const small1 = await rate(divan.url, headers, `/own${path}`);
      const large1 = await rate(divan.url, headers, `/shared${path}`);
      const large = (large1 + (await rate(divan.url, headers, `/shared${path}`))) / 2;
      const small = (small1 + (await rate(divan.url, headers, `/own${path}`))) / 2;
      lines.push(`| ${name} | ${small.toFixed(0)} req/s | ${large.toFixed(0)} req/s | ${(large / small).toFixed(2)} |`);
    }
    const minutes = (performance.now() - started) / 60_000;
    const storage = option('--storage') === 'postgres' ? 'postgres' : 'sqlite';
    const text = `# A user's listings: one access database vs a per-user database\n\n${new Date().toISOString()}, storage ${storage}, ${USERS} users × ${PER_USER} documents (filled in ${fillSeconds.toFixed(0)} s), Basic authentication, ${CONNECTIONS} connections, ${DURATION} s per scenario after 1 s of warm-up, Node ${process.version}; the run took ${minutes.toFixed(1)} min.\n\n${lines.join('\n')}\n`;
    process.stdout.write(`\n${text}`);
    writeFileSync(join(ROOT, 'bench', `access-results-${storage}.md`), text);
  } finally {
    await divan.stop();
    await schema?.drop();
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
