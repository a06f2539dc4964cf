import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

describe('server endpoints', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  test('R-ROOT-1: GET / greets with couchdb, version, uuid and vendor name and version', async () => {
    const res = await server.request('/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'must-revalidate');
    assert.ok(res.text.endsWith('}\n'), 'JSON bodies end with a newline');
    assert.equal(res.body.couchdb, 'Welcome');
    assert.match(res.body.version, /^3\.\d+\.\d+$/);
    assert.match(res.body.uuid, /^[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(res.body.vendor), ['name', 'version']);
    assert.equal(res.body.vendor.name, 'Divan');
    assert.equal(typeof res.body.vendor.version, 'string');
    assert.deepEqual(Object.keys(res.body).slice(0, 2), ['couchdb', 'version']);
  });

  test('R-ROOT-1: the uuid is the one persisted in [couchdb] uuid', async () => {
    const res = await server.request('/');
    assert.equal(res.body.uuid, server.app.config.get('couchdb', 'uuid'));
  });

  test('R-ROOT-2: GET / accepts Basic credentials of a server admin', async () => {
    const res = await server.admin('/');
    assert.equal(res.status, 200);
  });

  test('R-ROOT-2 / R-BASIC-1: wrong Basic credentials on GET / answer 401 Name or password is incorrect.', async () => {
    const res = await server.request('/', { auth: [ADMIN[0], 'wrong'] });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  test('invalid base64 in Basic answers 400, never 500', async () => {
    for (const value of ['Basic x', 'Basic XX=', 'Basic !!!']) {
      const res = await server.request('/', { headers: { Authorization: value } });
      assert.equal(res.status, 400, value);
      assert.deepEqual(res.body, { error: 'bad_request', reason: 'Authorization header has invalid base64 value' });
    }
  });

  test('X-CouchDB-WWW-Authenticate is echoed as WWW-Authenticate on a 401', async () => {
    const res = await server.request('/_all_dbs', { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Cookie');
  });

  test('HEAD / answers headers only', async () => {
    const res = await server.request('/', { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.ok(Number(res.headers['content-length']) > 0);
  });

  test('POST / is 405 with Allow: GET,HEAD', async () => {
    const res = await server.request('/', { method: 'POST', body: {} });
    assert.equal(res.status, 405);
    assert.deepEqual(res.body, { error: 'method_not_allowed', reason: 'Only GET,HEAD allowed' });
    assert.equal(res.headers['allow'], 'GET,HEAD');
  });

  test('GET /_up is ok for anonymous callers', async () => {
    const res = await server.request('/_up');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
  });

  test('GET /_uuids gives one by default, count many, distinct 32-hex values', async () => {
    const one = await server.request('/_uuids');
    assert.equal(one.status, 200);
    assert.equal(one.body.uuids.length, 1);
    const many = await server.request('/_uuids?count=50');
    assert.equal(many.body.uuids.length, 50);
    assert.equal(new Set(many.body.uuids).size, 50);
    for (const uuid of many.body.uuids) assert.match(uuid, /^[0-9a-f]{32}$/);
    assert.match(String(many.headers['cache-control']), /no-cache/);
  });

  test('GET /_uuids refuses a count above [uuids] max_count and a non-number', async () => {
    const big = await server.request('/_uuids?count=1001');
    assert.equal(big.status, 400);
    assert.deepEqual(big.body, { error: 'bad_request', reason: 'count parameter too large' });
    const bad = await server.request('/_uuids?count=abc');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'bad_request', reason: 'count must be a positive integer' });
  });

  test('GET /_all_dbs is for server admins: anonymous gets 401 You are not a server admin.', async () => {
    const res = await server.request('/_all_dbs');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
  });

  test('R-USERS-1: GET /_all_dbs as admin lists _replicator and _users, created at start, in order', async () => {
    await server.admin('/zeta', { method: 'PUT' });
    await server.admin('/alpha', { method: 'PUT' });
    const res = await server.admin('/_all_dbs');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, ['_replicator', '_users', 'alpha', 'zeta']);
    const limited = await server.admin('/_all_dbs?startkey=%22alpha%22&limit=1');
    assert.deepEqual(limited.body, ['alpha']);
    const descending = await server.admin('/_all_dbs?descending=true');
    assert.deepEqual(descending.body, ['zeta', 'alpha', '_users', '_replicator']);
  });

  test('GET /_membership names this node', async () => {
    const res = await server.request('/_membership');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { all_nodes: ['divan@127.0.0.1'], cluster_nodes: ['divan@127.0.0.1'] });
  });

  test('an unknown server endpoint is 401 for anonymous and 400 illegal_database_name for an admin', async () => {
    assert.equal((await server.request('/_nothing_here')).status, 401);
    const res = await server.admin('/_nothing_here');
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'illegal_database_name');
  });

  test('every response carries X-Couch-Request-ID', async () => {
    const res = await server.request('/_up');
    assert.match(String(res.headers['x-couch-request-id']), /^[0-9a-f]+$/);
  });

  test('a malformed percent-encoding in the path is a 400 JSON error', async () => {
    const res = await server.request('/db/%ZZ');
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'bad_request');
  });
  test('GET /_active_tasks lists this node\'s tasks for server admins and refuses others', async () => {
    const res = await server.admin('/_active_tasks');
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body));
    const anonymous = await server.request('/_active_tasks');
    assert.equal(anonymous.status, 401);
    const posted = await server.admin('/_active_tasks', { method: 'POST', body: {} });
    assert.equal(posted.status, 405);
  });
});
