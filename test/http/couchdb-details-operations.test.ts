import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

const CONFIG = '/_node/_local/_config';

async function setConfig(server: TestServer, section: string, key: string, value: string, persist = true): Promise<number> {
  const headers: Record<string, string> = persist ? {} : { 'X-Couch-Persist': 'false' };
  return (await server.admin(`${CONFIG}/${section}/${key}`, { method: 'PUT', body: JSON.stringify(value), headers })).status;
}

/** Operations details, each answered as CouchDB 3.5 answers it (chttpd_node.erl, mem3_reshard_httpd.erl, couch_uuids.erl). */
describe('CouchDB details: operations', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  test('/_reshard answers as a one-node CouchDB with nothing to split, not as a database name', async () => {
    const summary = await server.admin('/_reshard');
    assert.deepEqual([summary.status, summary.body], [200, { state: 'running', state_reason: null, completed: 0, failed: 0, running: 0, stopped: 0, total: 0 }]);
    assert.deepEqual((await server.admin('/_reshard/state')).body, { state: 'running', reason: null });
    assert.deepEqual((await server.admin('/_reshard/jobs')).body, { total_rows: 0, offset: 0, jobs: [] });
    const job = await server.admin('/_reshard/jobs/001-abc');
    assert.deepEqual([job.status, job.body], [404, { error: 'not_found', reason: 'missing' }]);
    const wrongMethod = await server.admin('/_reshard', { method: 'POST', body: {} });
    assert.deepEqual([wrongMethod.status, wrongMethod.headers['allow']], [405, 'GET,HEAD']);
    assert.equal((await server.request('/_reshard')).status, 401, 'server admins only');
  });

  test('PUT /_reshard/state checks its body as CouchDB; starting is ok, stopping and new jobs are 501 not_implemented', async () => {
    const noState = await server.admin('/_reshard/state', { method: 'PUT', body: {} });
    assert.deepEqual([noState.status, noState.body.reason], [400, 'Expected a `state` field']);
    const badState = await server.admin('/_reshard/state', { method: 'PUT', body: { state: 'paused' } });
    assert.deepEqual([badState.status, badState.body.reason], [400, 'State field not `running` or `stopped`']);
    const running = await server.admin('/_reshard/state', { method: 'PUT', body: { state: 'running' } });
    assert.deepEqual([running.status, running.body], [200, { ok: true }]);
    const stopped = await server.admin('/_reshard/state', { method: 'PUT', body: { state: 'stopped' } });
    assert.deepEqual([stopped.status, stopped.body], [501, { error: 'not_implemented', reason: 'this feature is not yet implemented' }]);
    const create = await server.admin('/_reshard/jobs', { method: 'POST', body: { type: 'split', db: 'x' } });
    assert.equal(create.status, 501);
  });

  test('[couchdb] database_dir is shown in GET /_config: the data directory', async () => {
    const all = await server.admin(CONFIG);
    assert.equal(all.body.couchdb.database_dir, server.dataDir);
    assert.equal((await server.admin(`${CONFIG}/couchdb/database_dir`)).body, server.dataDir);
  });

  test('POST _config/_reload reads the files again: a value set without persisting is forgotten, a file edit applies', async () => {
    assert.equal(await setConfig(server, 'uuids', 'max_count', '7', false), 200);
    assert.equal((await server.admin(`${CONFIG}/uuids/max_count`)).body, '7');
    appendFileSync(join(server.dataDir, 'test.ini'), '\n[reloaded]\nadded = by hand\n');
    const reload = await server.admin(`${CONFIG}/_reload`, { method: 'POST' });
    assert.deepEqual([reload.status, reload.body], [200, { ok: true }]);
    assert.equal((await server.admin(`${CONFIG}/uuids/max_count`)).body, '1000');
    assert.equal((await server.admin(`${CONFIG}/reloaded/added`)).body, 'by hand');
    assert.equal((await server.admin(`${CONFIG}/couchdb/database_dir`)).body, server.dataDir, 'the data directory stays shown');
    const get = await server.admin(`${CONFIG}/_reload`);
    assert.deepEqual([get.status, get.headers['allow']], [405, 'POST']);
  });

  test('a reloaded change is applied: [uuids] max_count from the file limits /_uuids at once', async () => {
    appendFileSync(join(server.dataDir, 'test.ini'), '\n[uuids]\nmax_count = 3\n');
    await server.admin(`${CONFIG}/_reload`, { method: 'POST' });
    try {
      assert.equal((await server.request('/_uuids?count=4')).status, 400);
      assert.equal((await server.request('/_uuids?count=3')).status, 200);
    } finally {
      await server.admin(`${CONFIG}/uuids/max_count`, { method: 'DELETE' });
    }
  });

  test('password_hashing_slow counts PBKDF2 checks and password_hashing_fast the cached ones, in _stats', async () => {
    // Read with a session cookie: a cookie checks no password, so the reads count nothing themselves.
    const login = await server.request('/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } });
    const cookie = String(login.headers['set-cookie']).split(';', 1)[0]!;
    const read = async (): Promise<[number, number]> => {
      const couchdb = (await server.request('/_node/_local/_stats/couchdb', { headers: { Cookie: cookie } })).body;
      return [couchdb.password_hashing_slow.value, couchdb.password_hashing_fast.value];
    };
    assert.equal((await server.admin('/_node/_local/_stats/couchdb/password_hashing_fast')).body.type, 'counter');
    await server.admin('/_users/org.couchdb.user:hasher', { method: 'PUT', body: { name: 'hasher', password: 'h4sh', roles: [], type: 'user' } });
    const [slow0, fast0] = await read();
    assert.equal((await server.request('/_session', { auth: ['hasher', 'h4sh'] })).status, 200);
    const [slow1, fast1] = await read();
    assert.deepEqual([slow1 - slow0, fast1 - fast0], [1, 0], 'the first check derives');
    assert.equal((await server.request('/_session', { auth: ['hasher', 'h4sh'] })).status, 200);
    const [slow2, fast2] = await read();
    assert.deepEqual([slow2 - slow1, fast2 - fast1], [0, 1], 'the next one is served by the cache');
  });

  test('/_uuids sends CouchDB cache-busting headers', async () => {
    const res = await server.request('/_uuids');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers['pragma'], 'no-cache');
    assert.equal(res.headers['expires'], 'Mon, 01 Jan 1990 00:00:00 GMT');
  });

  test('[uuids] algorithm sequential (the default): a shared 26-digit prefix and growing 6-digit suffixes', async () => {
    const { uuids } = (await server.request('/_uuids?count=50')).body as { uuids: string[] };
    for (const uuid of uuids) assert.match(uuid, /^[0-9a-f]{32}$/);
    for (let i = 1; i < uuids.length; i++) {
      if (uuids[i]!.slice(0, 26) !== uuids[i - 1]!.slice(0, 26)) continue; // a new prefix after an overflow
      assert.ok(uuids[i]! > uuids[i - 1]!, 'sequential ids grow');
    }
    assert.ok(uuids.filter((uuid) => uuid.startsWith(uuids[0]!.slice(0, 26))).length > 1);
  });

  test('[uuids] algorithm random, utc_random and utc_id (with utc_id_suffix), for /_uuids and generated document ids', async () => {
    try {
      await setConfig(server, 'uuids', 'algorithm', 'random');
      const random = (await server.request('/_uuids?count=20')).body.uuids as string[];
      assert.ok(random.every((uuid) => /^[0-9a-f]{32}$/.test(uuid)));
      assert.ok(new Set(random.map((uuid) => uuid.slice(0, 26))).size > 1, 'no shared prefix');

      const beforeMicros = Date.now() * 1000;
      await setConfig(server, 'uuids', 'algorithm', 'utc_random');
      const utc = (await server.request('/_uuids?count=5')).body.uuids as string[];
      for (const uuid of utc) {
        assert.match(uuid, /^[0-9a-f]{32}$/);
        assert.ok(Math.abs(parseInt(uuid.slice(0, 14), 16) - beforeMicros) < 60_000_000, 'the first 14 digits are microseconds since 1970');
      }
      assert.deepEqual([...utc].sort(), utc, 'time-ordered');

      await setConfig(server, 'uuids', 'algorithm', 'utc_id');
      await setConfig(server, 'uuids', 'utc_id_suffix', 'node-a');
      const utcId = (await server.request('/_uuids?count=2')).body.uuids as string[];
      for (const uuid of utcId) assert.match(uuid, /^[0-9a-f]{14}node-a$/);
      await server.admin('/generated', { method: 'PUT' });
      const posted = await server.admin('/generated', { method: 'POST', body: {} });
      assert.match(posted.body.id, /^[0-9a-f]{14}node-a$/);
    } finally {
      await server.admin(`${CONFIG}/uuids/algorithm`, { method: 'DELETE' });
      await server.admin(`${CONFIG}/uuids/utc_id_suffix`, { method: 'DELETE' });
    }
  });
});

describe('CouchDB details: a _config value Divan cannot use', () => {
  test('is stored as CouchDB stores it, the server stays usable, and every other change of the run applies', async () => {
    const server = await startServer({ keepData: true });
    try {
      // A client's run of changes, with a stray `)` in the middle one.
      assert.equal(await setConfig(server, 'couchdb', 'max_document_size', '5000000'), 200);
      assert.equal(await setConfig(server, 'chttpd', 'authentication_handlers', '{chttpd_auth, cookie_authentication_handler}), {chttpd_auth, default_authentication_handler}'), 200);
      assert.equal(await setConfig(server, 'uuids', 'max_count', '9'), 200);
      assert.equal((await server.admin(`${CONFIG}/couchdb/max_document_size`)).body, '5000000');
      assert.equal((await server.admin(`${CONFIG}/uuids/max_count`)).body, '9');
      assert.match(readFileSync(join(server.dataDir, 'test.ini'), 'utf8'), /cookie_authentication_handler\}\)/, 'stored as written');
      // The chain it had keeps working: Basic and cookies alike.
      assert.equal((await server.admin('/_all_dbs')).status, 200);
      const login = await server.request('/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } });
      assert.equal(login.status, 200);
      assert.ok(server.logs.some((line) => line.includes('keeping the previous authentication chain')), 'the log says why');
    } finally {
      await server.close();
    }
    // Restarted with the stored value: the server starts with CouchDB's default chain and is reachable.
    const restarted = await startServer({ dataDir: server.dataDir });
    try {
      assert.equal((await restarted.admin('/_all_dbs')).status, 200);
      assert.equal((await restarted.admin(`${CONFIG}/uuids/max_count`)).body, '9');
      assert.ok(restarted.logs.some((line) => line.includes('starting with the default handlers')));
    } finally {
      await restarted.close();
    }
  });

  test('a value the ini file cannot hold is refused whole: nothing of it is applied', async () => {
    const server = await startServer();
    try {
      const res = await server.admin(`${CONFIG}/uuids/max_count`, { method: 'PUT', body: JSON.stringify('5\n[admins]\nmallory = x') });
      assert.equal(res.status, 400);
      assert.equal((await server.admin(`${CONFIG}/uuids/max_count`)).body, '1000');
      assert.equal((await server.admin(`${CONFIG}/admins/mallory`)).status, 404);
      assert.doesNotMatch(readFileSync(join(server.dataDir, 'test.ini'), 'utf8'), /mallory/);
      assert.equal((await server.admin('/_all_dbs')).status, 200);
    } finally {
      await server.close();
    }
  });
});
