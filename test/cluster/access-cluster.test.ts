// Per-document access on three stateless nodes over one PostgreSQL: users writing through different
// nodes see only their documents on every node, whatever node they read from and however they
// authenticate (Basic, JWT with a roles claim, proxy headers with roles).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { hashAdminPassword } from '../../src/users/password-hash.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { EXTERNAL_HANDLERS } from '../support/external-auth.js';
import { request, type HttpOptions, type HttpResponse } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['ops', 'ops-pass'];
const JWT_SECRET = Buffer.from('access-cluster-jwt-secret-of-32-bytes!!');
const PROXY_SECRET = 'access-cluster-proxy-secret';
const DB = 'todos';

type Caller = { basic: [string, string] } | { jwt: { sub: string; roles: string[] } } | { proxy: { name: string; roles: string } };

const ALICE: Caller = { basic: ['alice', 'a-pw'] };
const BOB: Caller = { basic: ['bob', 'b-pw'] };
/** Known to no `_users` document: a token's claims are their whole identity. */
const JANE: Caller = { jwt: { sub: 'jane', roles: ['todo', 'team'] } };
const PAT: Caller = { proxy: { name: 'pat', roles: 'todo' } };

async function headersOf(caller: Caller): Promise<Record<string, string>> {
  if ('basic' in caller) return { Authorization: `Basic ${Buffer.from(caller.basic.join(':')).toString('base64')}` };
  if ('jwt' in caller) {
    const token = await new SignJWT({ sub: caller.jwt.sub, '_couchdb.roles': caller.jwt.roles, exp: Math.floor(Date.now() / 1000) + 300 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(JWT_SECRET);
    return { Authorization: `Bearer ${token}` };
  }
  const token = createHmac('sha256', PROXY_SECRET).update(caller.proxy.name).digest('hex');
  return { 'X-Auth-CouchDB-UserName': caller.proxy.name, 'X-Auth-CouchDB-Roles': caller.proxy.roles, 'X-Auth-CouchDB-Token': token };
}

async function as(node: string, caller: Caller, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  return request(node, `/${DB}${path}`, { ...options, headers: { ...options.headers, ...(await headersOf(caller)) } });
}

const ids = (rows: { id: string }[]): string[] => rows.map((row) => row.id).sort();

describe('per-document access on three Divan nodes over one PostgreSQL', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const url = POSTGRES_TEST_URL!;
  const schema = uniqueSchema();
  const dirs: string[] = [];
  let nodes: RunningDivan[] = [];
  let all: string[] = [];
  let a: string, b: string, c: string;
  /** Each caller's documents, each written through another node. */
  const owned: [Caller, string, string, string[]][] = [];

  before(async () => {
    const adminHash = await hashAdminPassword(ADMIN[1], 'sha256', 1000);
    const ini = [
      '[divan]', 'storage = postgres', `postgres_schema = ${schema}`,
      '[admins]', `${ADMIN[0]} = ${adminHash}`,
      '[chttpd]', `authentication_handlers = ${EXTERNAL_HANDLERS}`,
      '[jwt_keys]', `hmac:_default = ${JWT_SECRET.toString('base64')}`,
      '[chttpd_auth]', 'iterations = 1000', `secret = ${PROXY_SECRET}`, 'proxy_use_secret = true',
      '[chttpd_auth_lockout]', 'mode = off',
      '[log]', 'level = warning', '',
    ].join('\n');
    const start = (): Promise<RunningDivan> => {
      const dir = mkdtempSync(join(tmpdir(), 'divan-node-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'node.ini'), ini);
      return startDivan(['--port', '0', '--data', dir, '--config', join(dir, 'node.ini')], { DIVAN_POSTGRES_URL: url });
    };
    nodes = await Promise.all([start(), start(), start()]);
    all = nodes.map((node) => node.url);
    [a, b, c] = all as [string, string, string];
    for (const [name, password, roles] of [['alice', 'a-pw', ['todo', 'team']], ['bob', 'b-pw', ['todo']]] as const) {
      const put = await request(a, `/_users/org.couchdb.user:${name}`, { method: 'PUT', auth: ADMIN, body: { name, password, roles, type: 'user' } });
      assert.equal(put.status, 201, put.text);
    }
    assert.equal((await request(b, `/${DB}?access=true`, { method: 'PUT', auth: ADMIN })).status, 201);
    const security = { admins: { names: [], roles: [] }, members: { names: [], roles: ['todo'] } };
    assert.equal((await request(c, `/${DB}/_security`, { method: 'PUT', auth: ADMIN, body: security })).status, 200);
    const writes: [Caller, string, string, string[]][] = [
      [ALICE, a, 'alice-1', ['alice']],
      [BOB, b, 'bob-1', ['bob']],
      [JANE, c, 'jane-1', ['jane']],
      [PAT, a, 'pat-1', ['pat']],
      [ALICE, b, 'team-1', ['team']],
      [BOB, c, 'bob-2', ['bob']],
    ];
    for (const [caller, node, id, access] of writes) {
      const res = await as(node, caller, `/${id}`, { method: 'PUT', body: { _access: access, title: id } });
      assert.equal(res.status, 201, `${id}: ${res.text}`);
      owned.push([caller, node, id, access]);
    }
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await dropSchema(url, schema);
  });

  /** What each caller may read: their own documents, and those of a role they have (`team`). */
  const expected: [string, Caller, string[]][] = [
    ['alice (Basic)', ALICE, ['alice-1', 'team-1']],
    ['bob (Basic)', BOB, ['bob-1', 'bob-2']],
    ['jane (JWT, roles from the token)', JANE, ['jane-1', 'team-1']],
    ['pat (proxy, roles from the header)', PAT, ['pat-1']],
  ];

  test('every caller lists only their documents in _all_docs and _changes, on every node', async () => {
    for (const [who, caller, mine] of expected) {
      for (const node of all) {
        const listed = await as(node, caller, '/_all_docs');
        assert.equal(listed.status, 200, `${who} on ${node}: ${listed.text}`);
        assert.deepEqual([ids(listed.body.rows), listed.body.total_rows], [mine, mine.length], `${who} _all_docs on ${node}`);
        const changes = await as(node, caller, '/_changes?include_docs=true');
        assert.deepEqual(ids(changes.body.results), mine, `${who} _changes on ${node}`);
        for (const row of changes.body.results as { doc: { title: string; _id: string } }[]) assert.equal(row.doc.title, row.doc._id);
        const info = await as(node, caller, '');
        assert.equal(info.body.doc_count, mine.length, `${who} GET /db on ${node}`);
      }
    }
  });

  test('a document another caller wrote through another node is missing for GET and _bulk_get', async () => {
    const everyId = owned.map(([, , id]) => id);
    for (const [who, caller, mine] of expected) {
      for (const node of all) {
        const got = await as(node, caller, '/_bulk_get', { method: 'POST', body: { docs: everyId.map((id) => ({ id })) } });
        assert.equal(got.status, 200, got.text);
        const readable = (got.body.results as { id: string; docs: { ok?: unknown }[] }[]).filter((result) => result.docs[0]!.ok !== undefined).map((result) => result.id);
        assert.deepEqual(readable.sort(), mine, `${who} _bulk_get on ${node}`);
        const other = everyId.find((id) => !mine.includes(id))!;
        assert.equal((await as(node, caller, `/${other}`)).status, 404, `${who} GET ${other} on ${node}`);
      }
    }
  });

  test('a longpoll feed on one node wakes for the caller\'s write on another node, and shows only their rows', async () => {
    for (const [caller, name, feedNode, otherWriter, otherName, writeNode] of [
      [ALICE, 'alice', c, BOB, 'bob', b],
      [JANE, 'jane', a, PAT, 'pat', c],
      [PAT, 'pat', b, ALICE, 'alice', a],
    ] as const) {
      const id = `${name}-live`;
      const since = (await as(feedNode, caller, '/_changes?since=now')).body.last_seq;
      const feed = as(feedNode, caller, `/_changes?feed=longpoll&since=${since}&timeout=10000`);
      // Another user's write, through yet another node, wakes the feed but must not show in it.
      const others = await as(writeNode, otherWriter, `/${id}-other`, { method: 'PUT', body: { _access: [otherName] } });
      assert.equal(others.status, 201, others.text);
      const written = await as(writeNode, caller, `/${id}`, { method: 'PUT', body: { _access: [name] } });
      assert.equal(written.status, 201, written.text);
      const res = await feed;
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results.map((row: { id: string }) => row.id), [id], `${name}'s feed on another node`);
    }
  });

  test('a continuous feed on one node streams the caller\'s writes made through the other nodes, and nothing else', async () => {
    const since = (await as(b, BOB, '/_changes?since=now')).body.last_seq;
    const feed = as(b, BOB, `/_changes?feed=continuous&since=${since}&timeout=1500`);
    assert.equal((await as(a, BOB, '/bob-stream-a', { method: 'PUT', body: { _access: ['bob'] } })).status, 201);
    assert.equal((await as(c, ALICE, '/alice-stream', { method: 'PUT', body: { _access: ['alice'] } })).status, 201);
    assert.equal((await as(c, BOB, '/bob-stream-c', { method: 'PUT', body: { _access: ['bob'] } })).status, 201);
    const res = await feed;
    const lines = res.text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as { id?: string; last_seq?: unknown });
    assert.deepEqual(lines.filter((line) => line.id !== undefined).map((line) => line.id), ['bob-stream-a', 'bob-stream-c']);
    assert.ok(lines.at(-1)!.last_seq !== undefined, res.text);
  });

  test('_local checkpoints are per user whatever node and authentication method writes them', async () => {
    const checkpoints: [Caller, string, number][] = [[ALICE, a, 1], [BOB, b, 2], [JANE, c, 3], [PAT, a, 4]];
    for (const [caller, node, seq] of checkpoints) {
      const put = await as(node, caller, '/_local/sync-checkpoint', { method: 'PUT', body: { seq } });
      assert.equal(put.status, 201, put.text);
    }
    for (const [caller, , seq] of checkpoints) {
      for (const node of all) {
        const got = await as(node, caller, '/_local/sync-checkpoint');
        assert.deepEqual([got.status, got.body.seq], [200, seq], `${JSON.stringify(caller)} on ${node}`);
      }
    }
  });

  test('a JWT or proxy caller cannot write a document that does not name them or their roles', async () => {
    const jane = await as(a, JANE, '/jane-forged', { method: 'PUT', body: { _access: ['bob'] } });
    assert.equal(jane.status, 403, jane.text);
    const janeTeam = await as(b, JANE, '/jane-team', { method: 'PUT', body: { _access: ['team'] } });
    assert.equal(janeTeam.status, 201, janeTeam.text);
    const pat = await as(c, PAT, '/pat-forged', { method: 'PUT', body: { _access: ['team'] } });
    assert.equal(pat.status, 403, pat.text);
    // Pat's token names pat; the same roles header with another name and pat's token is refused.
    const forged = await request(a, `/${DB}/pat-1`, { headers: { ...(await headersOf(PAT)), 'X-Auth-CouchDB-UserName': 'alice' } });
    assert.notEqual(forged.status, 200, forged.text);
    const team = await as(c, ALICE, '/_all_docs');
    assert.ok(ids(team.body.rows).includes('jane-team'), team.text);
  });
});
