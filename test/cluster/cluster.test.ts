import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashAdminPassword } from '../../src/users/password-hash.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['ops', 'ops-pass'];

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, limitMs: number): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() - started > limitMs) return { value, ms: Date.now() - started };
    await new Promise((wait) => setTimeout(wait, 20));
  }
}

const cookieOf = (res: HttpResponse): string => String([res.headers['set-cookie']].flat()[0]).split(';')[0]!;

describe('three Divan nodes on one PostgreSQL', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const url = POSTGRES_TEST_URL!;
  const schema = uniqueSchema();
  const dirs: string[] = [];
  let nodes: RunningDivan[] = [];
  let a: string, b: string, c: string;

  before(async () => {
    // Every node must share [admins] (the same hash, so admin cookies work everywhere) and storage.
    const adminHash = await hashAdminPassword(ADMIN[1], 'sha256', 1000);
    const ini = [
      '[divan]', 'storage = postgres', `postgres_schema = ${schema}`,
      '[admins]', `${ADMIN[0]} = ${adminHash}`,
      '[chttpd_auth]', 'iterations = 1000',
      '[log]', 'level = warning', '',
    ].join('\n');
    const start = (): Promise<RunningDivan> => {
      const dir = mkdtempSync(join(tmpdir(), 'divan-node-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'node.ini'), ini);
      return startDivan(['--port', '0', '--data', dir, '--config', join(dir, 'node.ini')], { DIVAN_POSTGRES_URL: url });
    };
    // Started together: schema migrations must cope with concurrent nodes.
    nodes = await Promise.all([start(), start(), start()]);
    [a, b, c] = nodes.map((node) => node.url) as [string, string, string];
    const put = await request(a, '/_users/org.couchdb.user:alice', { method: 'PUT', auth: ADMIN, body: { name: 'alice', password: 'alice-1', roles: ['staff'], type: 'user' } });
    assert.equal(put.status, 201, put.text);
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await dropSchema(url, schema);
  });

  test('a user created through A logs in through C', async () => {
    const login = await request(c, '/_session', { method: 'POST', body: { name: 'alice', password: 'alice-1' } });
    assert.equal(login.status, 200, login.text);
    assert.deepEqual(login.body, { ok: true, name: 'alice', roles: ['staff'] });
  });

  test('a cookie minted by node A (with the secret A generated and stored) authenticates on B and C', async () => {
    const login = await request(a, '/_session', { method: 'POST', body: { name: 'alice', password: 'alice-1' } });
    const cookie = cookieOf(login);
    for (const node of [b, c]) {
      const res = await request(node, '/_session', { headers: { Cookie: cookie } });
      assert.deepEqual({ name: res.body.userCtx.name, by: res.body.info.authenticated }, { name: 'alice', by: 'cookie' }, node);
    }
  });

  test('after a password change through B, the old cookie and the old password fail on A and C within one second', async (t) => {
    await request(a, '/_session', { auth: ['alice', 'alice-1'] });
    await request(c, '/_session', { auth: ['alice', 'alice-1'] });
    const cookie = cookieOf(await request(a, '/_session', { method: 'POST', body: { name: 'alice', password: 'alice-1' } }));
    const current = await request(b, '/_users/org.couchdb.user:alice', { auth: ADMIN });
    const change = await request(b, '/_users/org.couchdb.user:alice', { method: 'PUT', auth: ADMIN, body: { ...current.body, password: 'alice-2' } });
    assert.equal(change.status, 201, change.text);
    for (const node of [a, c]) {
      const oldCookie = await until(() => request(node, '/_session', { headers: { Cookie: cookie } }), (res) => res.body.userCtx.name === null, 1000);
      assert.equal(oldCookie.value.body.userCtx.name, null, `old cookie still valid on ${node} after ${oldCookie.ms} ms`);
      const oldPassword = await until(() => request(node, '/_session', { auth: ['alice', 'alice-1'] }), (res) => res.status === 401, 1000);
      assert.equal(oldPassword.value.status, 401, `old password still valid on ${node} after ${oldPassword.ms} ms`);
      t.diagnostic(`${node}: old cookie refused after ${oldCookie.ms} ms, old password after ${oldPassword.ms} ms`);
      assert.equal((await request(node, '/_session', { auth: ['alice', 'alice-2'] })).body.userCtx.name, 'alice');
    }
  });

  test('a validate_doc_update added or changed through A applies on B and C within one second', async () => {
    assert.equal((await request(a, '/ruled', { method: 'PUT', auth: ADMIN })).status, 201);
    // B and C cache the database's (empty) list of validation functions first.
    for (const node of [b, c]) assert.equal((await request(node, `/ruled/before-${node.slice(-5)}`, { method: 'PUT', auth: ADMIN, body: { v: 1 } })).status, 201);
    const rules = { validate_doc_update: 'function (newDoc) { if (!newDoc.ok) throw({forbidden: "ok required"}); }' };
    assert.equal((await request(a, '/ruled/_design/rules', { method: 'PUT', auth: ADMIN, body: rules })).status, 201);
    let n = 0;
    for (const node of [b, c]) {
      const refused = await until(() => request(node, `/ruled/doc-${n++}`, { method: 'PUT', auth: ADMIN, body: { v: 1 } }), (res) => res.status === 403, 1000);
      assert.deepEqual([refused.value.status, refused.value.body.reason], [403, 'ok required'], `${node} after ${refused.ms} ms`);
    }
  });

  test('five wrong passwords spread over the three nodes lock the account on all of them', async () => {
    await request(a, '/_users/org.couchdb.user:bob', { method: 'PUT', auth: ADMIN, body: { name: 'bob', password: 'bob-pass', roles: [], type: 'user' } });
    const from = { 'X-Forwarded-For': '203.0.113.77' };
    const order = [a, b, c, a, b];
    for (const node of order) {
      const res = await request(node, '/_session', { headers: from, auth: ['bob', 'wrong'] });
      assert.equal(res.status, 401);
    }
    for (const node of [a, b, c]) {
      const locked = await until(() => request(node, '/_session', { headers: from, auth: ['bob', 'bob-pass'] }), (res) => res.status === 403, 1000);
      assert.equal(locked.value.status, 403, `${node}: ${locked.value.text}`);
      assert.deepEqual(locked.value.body, { error: 'forbidden', reason: 'Account is temporarily locked due to multiple authentication failures' });
    }
    assert.equal((await request(b, '/_session', { auth: ['bob', 'bob-pass'] })).body.userCtx.name, 'bob', 'another client address is not locked');
  });

  test('a concurrent mixed load through all three nodes gives no 5xx and loses no acknowledged write', async () => {
    await request(a, '/load', { method: 'PUT', auth: ADMIN });
    const nodesList = [a, b, c];
    const acknowledged = new Map<string, string>();
    const statuses: number[] = [];
    // Distinct documents written through every node at once.
    await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const res = await request(nodesList[i % 3]!, `/load/doc-${i}`, { method: 'PUT', auth: ADMIN, body: { i } });
        statuses.push(res.status);
        if (res.status === 201) acknowledged.set(`doc-${i}`, res.body.rev);
      }),
    );
    // One document edited from all nodes at once: each round exactly one edit wins, the rest conflict.
    let rev = (await request(a, '/load/contended', { method: 'PUT', auth: ADMIN, body: { n: 0 } })).body.rev as string;
    for (let round = 1; round <= 10; round++) {
      const answers = await Promise.all(nodesList.map((node) => request(node, '/load/contended', { method: 'PUT', auth: ADMIN, body: { _rev: rev, n: round, node } })));
      statuses.push(...answers.map((res) => res.status));
      const winners = answers.filter((res) => res.status === 201);
      assert.equal(winners.length, 1, `round ${round}: ${answers.map((res) => res.status).join(',')}`);
      assert.ok(answers.every((res) => res.status === 201 || res.status === 409));
      rev = winners[0]!.body.rev;
    }
    assert.ok(statuses.every((status) => status < 500), `5xx seen: ${statuses.filter((s) => s >= 500)}`);
    const all = await request(c, '/load/_all_docs', { auth: ADMIN });
    const stored = new Map((all.body.rows as { id: string; value: { rev: string } }[]).map((row) => [row.id, row.value.rev]));
    for (const [id, ackRev] of acknowledged) assert.equal(stored.get(id), ackRev, `${id} lost or changed`);
    assert.equal(acknowledged.size, 150);
    assert.equal(stored.get('contended'), rev);
    const info = await request(b, '/load', { auth: ADMIN });
    assert.equal(info.body.doc_count, 151);
  });

  test('GET /_up reports storage health', async () => {
    const res = await request(a, '/_up');
    assert.equal(res.status, 200);
  });
});
