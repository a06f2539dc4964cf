import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAdminHash } from '../../src/users/password-hash.js';
import { startServer, type TestServer } from '../support/server.js';

describe('_config API', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  test('anonymous callers get 401 You are not a server admin.', async () => {
    const res = await server.request('/_node/_local/_config');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
  });

  test('issue 36 item 5: PUT and DELETE in CouchDB\'s blocked sections answer 403 as CouchDB, and nothing is stored', async () => {
    for (const section of ['daemons', 'external', 'httpd_design_handlers', 'httpd_db_handlers', 'httpd_global_handlers', 'native_query_servers', 'os_daemons', 'query_servers', 'feature_flags']) {
      const put = await server.admin(`/_node/_local/_config/${section}/x`, { method: 'PUT', body: JSON.stringify('{couch_os_daemon, start_link, ["/bin/sh"]}') });
      assert.equal(put.status, 403, section);
      assert.deepEqual(put.body, { error: 'forbidden', reason: 'Config section blacklisted for modification over HTTP API.' });
      assert.equal((await server.admin(`/_node/_local/_config/${section}/x`)).status, 404, `${section} stays empty`);
      assert.equal((await server.admin(`/_node/_local/_config/${section}/x`, { method: 'DELETE' })).status, 403, section);
    }
  });

  test('GET /_node/_local/_config returns every section; admins are hashed', async () => {
    const res = await server.admin('/_node/_local/_config');
    assert.equal(res.status, 200);
    assert.equal(res.body.chttpd.port, '5984');
    assert.match(res.body.admins.root, /^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},600000$/);
  });

  test('the node name works as well as _local; another name is 404', async () => {
    const res = await server.admin('/_node/divan@127.0.0.1/_config/couchdb/default_security');
    assert.equal(res.status, 200);
    assert.equal(res.body, 'admin_only');
    const other = await server.admin('/_node/other@host/_config');
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, { error: 'not_found', reason: 'no such node: other@host' });
  });

  test('GET a section gives its keys; an unknown section is {}', async () => {
    const res = await server.admin('/_node/_local/_config/uuids');
    assert.deepEqual(res.body, { algorithm: 'sequential', max_count: '1000' });
    const none = await server.admin('/_node/_local/_config/nosuchsection');
    assert.deepEqual(none.body, {});
  });

  test('PUT answers the old value ("" when new), GET then shows the new one; DELETE answers the old value', async () => {
    const put = await server.admin('/_node/_local/_config/testing/alpha', { method: 'PUT', body: '"one"' });
    assert.equal(put.status, 200);
    assert.equal(put.text, '""\n');
    const put2 = await server.admin('/_node/_local/_config/testing/alpha', { method: 'PUT', body: '"  two  "' });
    assert.equal(put2.body, 'one');
    assert.equal((await server.admin('/_node/_local/_config/testing/alpha')).body, 'two', 'values are trimmed');
    const del = await server.admin('/_node/_local/_config/testing/alpha', { method: 'DELETE' });
    assert.equal(del.body, 'two');
    const gone = await server.admin('/_node/_local/_config/testing/alpha');
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { error: 'not_found', reason: 'unknown_config_value' });
    assert.equal((await server.admin('/_node/_local/_config/testing/alpha', { method: 'DELETE' })).status, 404);
  });

  test('PUT with a non-string JSON body is 400 a JSON string expected', async () => {
    for (const body of ['1', '{"a":1}', 'true', '["x"]']) {
      const res = await server.admin('/_node/_local/_config/testing/beta', { method: 'PUT', body });
      assert.equal(res.status, 400, body);
      assert.deepEqual(res.body, { error: 'bad_request', reason: 'a JSON string expected' });
    }
    const invalid = await server.admin('/_node/_local/_config/testing/beta', { method: 'PUT', body: 'not json' });
    assert.deepEqual(invalid.body, { error: 'bad_request', reason: 'invalid UTF-8 JSON' });
  });

  test('changes are persisted to the writable layer file', async () => {
    await server.admin('/_node/_local/_config/testing/persisted', { method: 'PUT', body: '"yes"' });
    const text = readFileSync(join(server.dataDir, 'test.ini'), 'utf8');
    assert.match(text, /^persisted = yes$/m);
  });

  test('X-Couch-Persist: false changes the running value only', async () => {
    await server.admin('/_node/_local/_config/testing/transient', { method: 'PUT', body: '"mem"', headers: { 'X-Couch-Persist': 'false' } });
    assert.equal((await server.admin('/_node/_local/_config/testing/transient')).body, 'mem');
    assert.doesNotMatch(readFileSync(join(server.dataDir, 'test.ini'), 'utf8'), /transient/);
  });

  test('a plaintext admin password put through _config is hashed, and the new admin can log in', async () => {
    const put = await server.admin('/_node/_local/_config/admins/carol', { method: 'PUT', body: '"c4rol-pass"' });
    assert.equal(put.status, 200);
    await server.app.services.admins.settled();
    const stored = (await server.admin('/_node/_local/_config/admins/carol')).body;
    assert.match(stored, /^-pbkdf2(:[a-z0-9]+)?-/);
    assert.ok(parseAdminHash(stored));
    assert.doesNotMatch(readFileSync(join(server.dataDir, 'test.ini'), 'utf8'), /c4rol-pass/);
    const root = await server.request('/_all_dbs', { auth: ['carol', 'c4rol-pass'] });
    assert.equal(root.status, 200);
  });

  test('an authentication_handlers value naming no handler Divan has is stored (as CouchDB) and the chain keeps working', async () => {
    const res = await server.admin('/_node/_local/_config/chttpd/authentication_handlers', { method: 'PUT', body: '"{chttpd_auth, bogus_handler}"' });
    try {
      assert.equal(res.status, 200);
      assert.equal((await server.admin('/_all_dbs')).status, 200);
    } finally {
      await server.app.config.set('chttpd', 'authentication_handlers', '{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}');
    }
  });

  test('R-METH-3 / R-METH-5: without the default handler in the chain, Basic credentials are ignored', async () => {
    const put = await server.admin('/_node/_local/_config/chttpd/authentication_handlers', { method: 'PUT', body: '"{chttpd_auth, cookie_authentication_handler}"' });
    assert.equal(put.status, 200);
    try {
      const res = await server.admin('/_all_dbs');
      assert.equal(res.status, 401, 'Basic is the default handler; without it the admin is anonymous');
    } finally {
      await server.app.config.set('chttpd', 'authentication_handlers', '{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}');
    }
  });

  test('require_valid_user makes anonymous requests 401 with WWW-Authenticate: Basic realm="server"', async () => {
    await server.admin('/_node/_local/_config/chttpd/require_valid_user', { method: 'PUT', body: '"true"' });
    try {
      const res = await server.request('/');
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: 'unauthorized', reason: 'Authentication required.' });
      assert.equal(res.headers['www-authenticate'], 'Basic realm="server"');
      assert.equal((await server.request('/_up')).status, 401);
      assert.equal((await server.admin('/')).status, 200);
    } finally {
      await server.admin('/_node/_local/_config/chttpd/require_valid_user', { method: 'PUT', body: '"false"' });
    }
    assert.equal((await server.request('/')).status, 200);
  });

  test('require_valid_user_except_for_up leaves /_up open', async () => {
    await server.admin('/_node/_local/_config/chttpd/require_valid_user_except_for_up', { method: 'PUT', body: '"true"' });
    try {
      assert.equal((await server.request('/_up')).status, 200);
      const root = await server.request('/');
      assert.equal(root.status, 401);
      assert.equal(root.headers['www-authenticate'], undefined, 'only require_valid_user adds the Basic challenge');
    } finally {
      await server.admin('/_node/_local/_config/chttpd/require_valid_user_except_for_up', { method: 'PUT', body: '"false"' });
    }
  });

  test('PUT /_node/_local/_config itself is 405', async () => {
    const res = await server.admin('/_node/_local/_config', { method: 'PUT', body: '"x"' });
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET');
  });
});
