// Real clients: PouchDB 9 (pouchdb-core, pouchdb-adapter-memory, pouchdb-adapter-http,
// pouchdb-replication) replicating with the real binary, under Basic, cookie, JWT and proxy
// authentication; conflicts; per-user databases; checkpoints across a restart; 10 000 documents.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import PouchDB, { type Database, type PouchFetchInit, type ReplicationResult } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import memoryAdapter from 'pouchdb-adapter-memory';
import replication from 'pouchdb-replication';
import { POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

PouchDB.plugin(memoryAdapter).plugin(httpAdapter).plugin(replication);

const ADMIN: [string, string] = ['admin', 'admin-pass'];
const JWT_SECRET = randomBytes(32);
const PROXY_SECRET = randomBytes(16).toString('hex');
const AUTH_CHAIN = [
  '{chttpd_auth, jwt_authentication_handler}',
  '{chttpd_auth, proxy_authentication_handler}',
  '{chttpd_auth, cookie_authentication_handler}',
  '{chttpd_auth, default_authentication_handler}',
].join(', ');

/** A Divan binary with its data directory, restartable on the same port. */
class Node {
  readonly dir = mkdtempSync(join(tmpdir(), 'divan-pouch-sync-'));
  divan: RunningDivan | undefined;
  url = '';
  readonly #env: Record<string, string>;

  constructor(extraIni: string[] = [], env: Record<string, string> = {}) {
    this.#env = env;
    writeFileSync(
      join(this.dir, 'divan.ini'),
      [
        '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`,
        '[chttpd]', `authentication_handlers = ${AUTH_CHAIN}`,
        '[chttpd_auth]', 'iterations = 1000', `secret = ${PROXY_SECRET}`, 'proxy_use_secret = true',
        '[chttpd_auth_lockout]', 'mode = off',
        '[jwt_keys]', `hmac:_default = ${JWT_SECRET.toString('base64')}`,
        '[couch_peruser]', 'enable = true',
        '[log]', 'level = warning',
        ...extraIni, '',
      ].join('\n'),
    );
  }

  async start(port = 0): Promise<void> {
    this.divan = await startDivan(['--port', String(port), '--data', this.dir, '--config', join(this.dir, 'divan.ini')], this.#env);
    this.url = this.divan.url;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    const code = await this.divan?.stop();
    assert.equal(code, 0, `server exit code (stderr: ${this.divan?.stderr()})`);
    this.divan = undefined;
  }

  async close(): Promise<void> {
    if (this.divan) await this.divan.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  admin(path: string, options: { method?: string; body?: unknown } = {}) {
    return request(this.url, path, { ...options, auth: ADMIN });
  }
}

async function createUser(node: Node, name: string, password: string): Promise<void> {
  const res = await node.admin(`/_users/org.couchdb.user:${name}`, { method: 'PUT', body: { name, password, roles: [], type: 'user' } });
  assert.equal(res.status, 201, res.text);
}

async function createDatabase(node: Node, db: string, members: string[]): Promise<void> {
  assert.equal((await node.admin(`/${db}`, { method: 'PUT' })).status, 201);
  const security = { admins: { names: [], roles: [] }, members: { names: members, roles: [] } };
  assert.equal((await node.admin(`/${db}/_security`, { method: 'PUT', body: security })).status, 200);
}

type FetchFn = (url: string, init: PouchFetchInit) => Promise<Response>;

/** A fetch for one authentication method: extra headers on every request, or a cookie jar of its own. */
function authFetch(headers: () => Promise<Record<string, string>> | Record<string, string>, jar?: { cookie?: string }): FetchFn {
  return async (url, init) => {
    const outgoing = new Headers();
    for (const [name, value] of init.headers.entries()) outgoing.set(name, value);
    for (const [name, value] of Object.entries(await headers())) outgoing.set(name, value);
    if (jar?.cookie) outgoing.set('Cookie', jar.cookie);
    const response = await fetch(url, { method: init.method, body: init.body, headers: outgoing, signal: init.signal });
    if (jar) {
      for (const cookie of response.headers.getSetCookie()) {
        if (cookie.startsWith('AuthSession=')) jar.cookie = cookie.split(';')[0];
      }
    }
    return response;
  };
}

const basic = (name: string, password: string): Record<string, string> => ({
  Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`,
});

async function jwtFor(name: string, seconds = 600): Promise<string> {
  return new SignJWT({ sub: name, exp: Math.floor(Date.now() / 1000) + seconds }).setProtectedHeader({ alg: 'HS256' }).sign(JWT_SECRET);
}

function proxyHeaders(name: string): Record<string, string> {
  return {
    'X-Auth-CouchDB-UserName': name,
    'X-Auth-CouchDB-Roles': '',
    'X-Auth-CouchDB-Token': createHmac('sha256', PROXY_SECRET).update(name).digest('hex'),
  };
}

/** The fetch of each authentication method for `name`. */
async function fetchFor(node: Node, method: 'basic' | 'cookie' | 'jwt' | 'proxy', name: string, password: string): Promise<FetchFn> {
  switch (method) {
    case 'basic':
      return authFetch(() => basic(name, password));
    case 'jwt':
      return authFetch(async () => ({ Authorization: `Bearer ${await jwtFor(name)}` }));
    case 'proxy':
      return authFetch(() => proxyHeaders(name));
    case 'cookie': {
      const login = await fetch(`${node.url}/_session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name, password }) });
      assert.equal(login.status, 200);
      const jar = { cookie: login.headers.getSetCookie()[0]!.split(';')[0] };
      return authFetch(() => ({}), jar);
    }
  }
}

let localCounter = 0;
function localDb<Content extends object = Record<string, unknown>>(): Database<Content> {
  return new PouchDB<Content>(`local-${process.pid}-${localCounter++}`, { adapter: 'memory' });
}

function remoteDb<Content extends object = Record<string, unknown>>(node: Node, db: string, fetchFn: FetchFn): Database<Content> {
  return new PouchDB<Content>(`${node.url}/${db}`, { skip_setup: true, fetch: fetchFn });
}

async function until(what: string, probe: () => Promise<boolean>, limitMs = 15000): Promise<void> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > limitMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function ids(db: Database<object>): Promise<string[]> {
  return (await db.allDocs()).rows.map((row) => row.id);
}

/** CouchDB's winner between live leaves of one generation: the higher hash. */
function expectedWinner(a: string, b: string): string {
  return a.slice(a.indexOf('-') + 1) > b.slice(b.indexOf('-') + 1) ? a : b;
}

describe('PouchDB 9 replication with the real binary', () => {
  const node = new Node();
  before(async () => {
    await node.start();
    await createUser(node, 'alice', 'alice-pass');
    await createUser(node, 'paul', 'paul-pass');
  });
  after(async () => node.close());

  for (const method of ['basic', 'cookie', 'jwt', 'proxy'] as const) {
    test(`${method}: one-shot sync both ways, then live sync both ways`, async () => {
      const db = `sync-${method}`;
      await createDatabase(node, db, ['alice']);
      const fetchFn = await fetchFor(node, method, 'alice', 'alice-pass');
      const answer = await fetchFn(`${node.url}/_session`, { headers: new Headers() as unknown as PouchFetchInit['headers'] });
      const session = (await answer.json()) as { userCtx: { name: string }; info: { authenticated: string } };
      assert.deepEqual([session.userCtx.name, session.info.authenticated], ['alice', method === 'basic' ? 'default' : method]);

      const local = localDb();
      const remote = remoteDb(node, db, fetchFn);
      await local.bulkDocs([{ _id: 'l1', n: 1 }, { _id: 'l2', n: 2 }, { _id: 'l3', n: 3 }]);
      for (const id of ['s1', 's2']) assert.equal((await node.admin(`/${db}/${id}`, { method: 'PUT', body: { from: 'server' } })).status, 201);
      const result = await local.sync(remote);
      assert.equal(result.push.ok && result.pull.ok, true);
      assert.deepEqual([result.push.docs_written, result.pull.docs_written], [3, 2]);
      assert.deepEqual(await ids(local), ['l1', 'l2', 'l3', 's1', 's2']);
      assert.deepEqual((await node.admin(`/${db}/_all_docs`)).body.rows.map((row: { id: string }) => row.id), ['l1', 'l2', 'l3', 's1', 's2']);

      const live = local.sync(remote, { live: true, retry: true });
      try {
        await local.put({ _id: 'live-local', at: Date.now() });
        await until('a local write to reach the server', async () => (await node.admin(`/${db}/live-local`)).status === 200);
        assert.equal((await node.admin(`/${db}/live-remote`, { method: 'PUT', body: { at: Date.now() } })).status, 201);
        await until('a server write to reach the local database', async () => (await ids(local)).includes('live-remote'));
      } finally {
        live.cancel();
      }
    });
  }

  test('concurrent edits on both sides become a CouchDB conflict with the same winner everywhere', async () => {
    await createDatabase(node, 'conflicts', ['alice']);
    const fetchFn = await fetchFor(node, 'basic', 'alice', 'alice-pass');
    const remote = remoteDb<{ v: string }>(node, 'conflicts', fetchFn);
    const phone = localDb<{ v: string }>();
    await phone.put({ _id: 'doc', v: 'base' });
    await phone.replicate.to(remote);
    // Offline: the phone and the server change the same revision.
    const onPhone = await phone.put({ ...(await phone.get('doc')), v: 'phone' });
    const onServer = await remote.put({ ...(await remote.get('doc')), v: 'server' });
    await phone.sync(remote);
    const laptop = localDb<{ v: string }>();
    await laptop.replicate.from(remote);

    const winner = expectedWinner(onPhone.rev, onServer.rev);
    const loser = winner === onPhone.rev ? onServer.rev : onPhone.rev;
    for (const [where, db] of [['phone', phone], ['server', remote], ['laptop', laptop]] as const) {
      const doc = await db.get('doc', { conflicts: true });
      assert.equal(doc._rev, winner, `${where} picks CouchDB's winner`);
      assert.deepEqual(doc._conflicts, [loser], `${where} keeps the other branch as a conflict`);
      assert.equal(doc.v, winner === onPhone.rev ? 'phone' : 'server');
    }
    const raw = await node.admin('/conflicts/doc?conflicts=true');
    assert.deepEqual([raw.body._rev, raw.body._conflicts], [winner, [loser]]);
  });

  test('a user syncs their own per-user database and no one else\u2019s', async () => {
    const paulDb = `userdb-${Buffer.from('paul').toString('hex')}`;
    const aliceDb = `userdb-${Buffer.from('alice').toString('hex')}`;
    const fetchFn = await fetchFor(node, 'jwt', 'paul', 'paul-pass');
    const local = localDb();
    await local.put({ _id: 'todo-1', text: 'milk' });
    const own = await local.sync(remoteDb(node, paulDb, fetchFn));
    assert.equal(own.push.docs_written, 1);
    assert.equal((await node.admin(`/${paulDb}/todo-1`)).body.text, 'milk');

    for (const attempt of [() => local.replicate.to(remoteDb(node, aliceDb, fetchFn)), () => local.replicate.from(remoteDb(node, aliceDb, fetchFn))]) {
      let failure: { status?: number } | undefined;
      try {
        await attempt();
      } catch (error) {
        failure = error as { status?: number };
      }
      assert.equal(failure?.status, 403, `expected 403, got ${JSON.stringify(failure)}`);
    }
    assert.equal((await node.admin(`/${aliceDb}/todo-1`)).status, 404, 'nothing reached the other user\u2019s database');
  });

  test('10 000 documents replicate in both directions; timing against plain _bulk_docs', async (t) => {
    const COUNT = 10_000;
    const BATCH = 100;
    const docs = Array.from({ length: COUNT }, (_, i) => ({ _id: `doc-${String(i).padStart(5, '0')}`, n: i, text: `document number ${i}` }));
    const fetchFn = await fetchFor(node, 'basic', 'alice', 'alice-pass');

    // Baseline: the same documents through plain _bulk_docs, in PouchDB's batch size, same client stack.
    await createDatabase(node, 'bulk-baseline', ['alice']);
    const baselineStart = performance.now();
    for (let i = 0; i < COUNT; i += BATCH) {
      const res = await fetchFn(`${node.url}/bulk-baseline/_bulk_docs`, {
        method: 'POST',
        headers: new Headers({ 'Content-Type': 'application/json' }) as unknown as PouchFetchInit['headers'],
        body: JSON.stringify({ docs: docs.slice(i, i + BATCH) }),
      });
      assert.equal(res.status, 201);
      await res.arrayBuffer();
    }
    const baselineMs = performance.now() - baselineStart;

    await createDatabase(node, 'bulk-push', ['alice']);
    const source = localDb();
    for (let i = 0; i < COUNT; i += 1000) await source.bulkDocs(docs.slice(i, i + 1000));
    const pushStart = performance.now();
    const pushed: ReplicationResult = await source.replicate.to(remoteDb(node, 'bulk-push', fetchFn), { batch_size: BATCH });
    const pushMs = performance.now() - pushStart;
    assert.equal(pushed.docs_written, COUNT);
    assert.equal((await node.admin('/bulk-push')).body.doc_count, COUNT);

    const target = localDb();
    const pullStart = performance.now();
    const pulled: ReplicationResult = await target.replicate.from(remoteDb(node, 'bulk-push', fetchFn), { batch_size: BATCH });
    const pullMs = performance.now() - pullStart;
    assert.equal(pulled.docs_written, COUNT);
    assert.equal((await target.info()).doc_count, COUNT);
    const sample = await target.get('doc-04242');
    assert.deepEqual([sample.n, sample.text], [4242, 'document number 4242']);

    const summary =
      `10000 docs: plain _bulk_docs ${baselineMs.toFixed(0)} ms; PouchDB push ${pushMs.toFixed(0)} ms ` +
      `(${(pushMs / baselineMs).toFixed(2)}x); PouchDB pull ${pullMs.toFixed(0)} ms (${(pullMs / baselineMs).toFixed(2)}x)`;
    t.diagnostic(summary);
    console.log(summary);
    // Replication does more than a bulk write (changes, revs_diff, bulk_get, checkpoints); a protocol
    // gone wrong (one request per document, refetching) shows up as a much larger factor.
    assert.ok(pushMs < baselineMs * 15, summary);
    assert.ok(pullMs < baselineMs * 15, summary);
  });
});

const BACKENDS_FOR_RESTART: { name: string; ini: string[]; env: Record<string, string>; cleanup?: () => Promise<void> }[] = [{ name: 'sqlite', ini: [], env: {} }];
if (POSTGRES_TEST_URL !== undefined) {
  const schema = uniqueSchema();
  const url = POSTGRES_TEST_URL;
  BACKENDS_FOR_RESTART.push({
    name: 'postgres',
    ini: ['[divan]', 'storage = postgres', `postgres_schema = ${schema}`],
    env: { DIVAN_POSTGRES_URL: url },
    cleanup: () => dropSchema(url, schema),
  });
}

for (const backend of BACKENDS_FOR_RESTART) {
  describe(`PouchDB checkpoints across a server restart (${backend.name})`, () => {
    const node = new Node(backend.ini, backend.env);
    before(async () => {
      await node.start();
      await createUser(node, 'alice', 'alice-pass');
      await createDatabase(node, 'resume', ['alice']);
    });
    after(async () => {
      await node.close();
      await backend.cleanup?.();
    });

    test('a replication resumes from its checkpoint after the server restarts', async () => {
      const fetchFn = await fetchFor(node, 'basic', 'alice', 'alice-pass');
      for (let i = 0; i < 30; i++) await node.admin(`/resume/s-${i}`, { method: 'PUT', body: { i } });
      const local = localDb();
      const first = await local.replicate.from(remoteDb(node, 'resume', fetchFn));
      assert.equal(first.docs_read, 30);
      const checkpoints = (await node.admin('/resume/_changes')).body.last_seq;

      const port = node.port;
      await node.stop();
      await node.start(port);
      assert.equal((await node.admin('/resume')).body.update_seq, checkpoints, 'the update sequence survived the restart');
      for (let i = 30; i < 35; i++) await node.admin(`/resume/s-${i}`, { method: 'PUT', body: { i } });

      const again = await local.replicate.from(remoteDb(node, 'resume', fetchFn));
      assert.equal(again.docs_read, 5, 'only the changes after the checkpoint were read');
      assert.equal((await local.info()).doc_count, 35);

      // The other direction keeps its checkpoint on the server too.
      await local.put({ _id: 'from-local' });
      const pushed = await local.replicate.to(remoteDb(node, 'resume', fetchFn));
      assert.equal(pushed.docs_written, 1);
      const port2 = node.port;
      await node.stop();
      await node.start(port2);
      await local.put({ _id: 'from-local-2' });
      const pushedAgain = await local.replicate.to(remoteDb(node, 'resume', fetchFn));
      assert.deepEqual([pushedAgain.docs_read, pushedAgain.docs_written], [1, 1]);
      const localCheckpoints = await node.admin('/resume/_all_docs');
      assert.equal(localCheckpoints.body.total_rows, 37);
    });
  });
}
