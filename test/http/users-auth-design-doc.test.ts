import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';
import { AUTH_VALIDATE_SOURCE } from '../../src/users/auth-design-doc.js';

/**
 * The authentication database holds CouchDB's own `_design/_auth` (chttpd_auth_cache
 * ensure_auth_ddoc_exists); Divan runs its rules natively while the function is CouchDB's text.
 */
describeOnEachBackend('_design/_auth of the authentication database', (server: () => TestServer) => {
  before(async () => {
    // A plain database holding the same design document: there only the JavaScript runs.
    assert.equal((await server().admin('/plain', { method: 'PUT' })).status, 201);
    const ddoc = { language: 'javascript', validate_doc_update: AUTH_VALIDATE_SOURCE };
    assert.equal((await server().admin('/plain/_design/_auth', { method: 'PUT', body: ddoc })).status, 201);
  });

  test('GET /_users/_design/_auth answers CouchDB\'s document: _id, language, validate_doc_update, nothing else', async () => {
    const res = await server().admin('/_users/_design/_auth');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['_id', '_rev', 'language', 'validate_doc_update']);
    assert.deepEqual([res.body.language, res.body.validate_doc_update], ['javascript', AUTH_VALIDATE_SOURCE]);
    assert.match(AUTH_VALIDATE_SOURCE, /^\n {4}function\(newDoc, oldDoc, userCtx, secObj\) \{\n/);
  });

  test('_users/_changes?filter=_design lists it', async () => {
    const res = await server().admin('/_users/_changes?filter=_design');
    assert.deepEqual((res.body.results as { id: string }[]).map((row) => row.id), ['_design/_auth']);
  });

  test('the native rules and CouchDB\'s JavaScript refuse the same user documents with the same reasons', async () => {
    const docs = [
      { _id: 'org.couchdb.user:ann', name: 'ann', roles: [] },
      { _id: 'org.couchdb.user:bob', type: 'user', roles: [] },
      { _id: 'org.couchdb.user:cy', type: 'user', name: 'dee', roles: [] },
      { _id: 'org.couchdb.user:eve', type: 'user', name: 'eve', roles: 'x' },
      { _id: 'org.couchdb.user:_fay', type: 'user', name: '_fay', roles: [] },
      { _id: 'org.couchdb.user:g:h', type: 'user', name: 'g:h', roles: [] },
      { _id: 'org.couchdb.user:ivy', type: 'user', name: 'ivy', roles: [7] },
      { _id: 'org.couchdb.user:jo', type: 'user', name: 'jo', roles: [], password_scheme: 'rot13' },
      { _id: 'org.couchdb.user:kim', type: 'user', name: 'kim', roles: ['_admin'] },
      { _id: 'org.couchdb.user:lu', type: 'user', name: 'lu', roles: ['r'] },
    ];
    let refused = 0;
    for (const doc of docs) {
      const id = encodeURIComponent(doc._id);
      const native = await server().admin(`/_users/${id}`, { method: 'PUT', body: doc });
      const js = await server().admin(`/plain/${id}`, { method: 'PUT', body: doc });
      assert.deepEqual([native.status, native.body.error, native.body.reason], [js.status, js.body.error, js.body.reason], doc._id);
      if (js.status === 403) refused++;
    }
    assert.ok(refused >= 7, `only ${refused} refused`);
  });

  test('an edited _design/_auth runs as written', async () => {
    const current = await server().admin('/_users/_design/_auth');
    const edited = { ...current.body, validate_doc_update: 'function (doc) { if (doc.type === "user") throw({forbidden: "closed by the edited _auth"}); }' };
    assert.equal((await server().admin('/_users/_design/_auth', { method: 'PUT', body: edited })).status, 201);
    const res = await server().admin('/_users/org.couchdb.user:max', { method: 'PUT', body: { type: 'user', name: 'max', roles: [], password: 'p' } });
    assert.deepEqual([res.status, res.body.reason], [403, 'closed by the edited _auth']);
  });
});
