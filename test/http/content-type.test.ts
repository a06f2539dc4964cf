// The CSRF guard: a POST or PUT body that is not application/json is 415 bad_content_type, so a
// cross-site <form enctype="text/plain"> (or urlencoded, or multipart) cannot write with a cookie.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { FAST_INI, NO_LOCKOUT_INI, loginCookie } from '../support/users-helpers.js';

const JSON_REQUIRED = { error: 'bad_content_type', reason: 'Content-Type must be application/json' };
const SESSION_TYPES = { error: 'bad_content_type', reason: "Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'" };

/** What a cross-site `<form enctype="text/plain">` with one field `{"_id":"x","a":"` = `"}` sends. */
const formText = (json: Record<string, unknown>): string => JSON.stringify(json);

describe('JSON bodies must be application/json (CSRF)', () => {
  let server: TestServer;
  let adminCookie: string;
  let securityBefore: unknown;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    assert.equal((await server.admin('/db', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/db/existing', { method: 'PUT', body: { v: 1 } })).status, 201);
    adminCookie = await loginCookie(server, ADMIN[0], ADMIN[1]);
    securityBefore = (await server.admin('/db/_security')).body;
  });
  after(async () => server.close());

  const asForm = (path: string, method: string, body: string, contentType: string | undefined) =>
    server.request(path, { method, body, headers: { Cookie: adminCookie, ...(contentType === undefined ? {} : { 'Content-Type': contentType }) } });

  const endpoints: [string, string, string, Record<string, unknown>][] = [
    ['POST /{db} (creates a design document)', 'POST', '/db', { _id: '_design/evil', views: {} }],
    ['POST /{db}/_bulk_docs', 'POST', '/db/_bulk_docs', { docs: [{ _id: 'bulk-evil' }] }],
    ['POST /{db}/_bulk_get', 'POST', '/db/_bulk_get', { docs: [{ id: 'existing' }] }],
    ['POST /{db}/_revs_diff', 'POST', '/db/_revs_diff', { existing: ['1-abc'] }],
    ['POST /{db}/_missing_revs', 'POST', '/db/_missing_revs', { existing: ['1-abc'] }],
    ['POST /{db}/_all_docs', 'POST', '/db/_all_docs', { keys: ['existing'] }],
    ['POST /{db}/_changes', 'POST', '/db/_changes?filter=_doc_ids', { doc_ids: ['existing'] }],
    ['POST /{db}/_ensure_full_commit', 'POST', '/db/_ensure_full_commit', {}],
    ['PUT /{db}/{doc}', 'PUT', '/db/put-evil', { v: 1 }],
    ['PUT /{db}/_design/{ddoc}', 'PUT', '/db/_design/put-evil', { views: {} }],
    ['PUT /{db}/_local/{id}', 'PUT', '/db/_local/put-evil', { v: 1 }],
    ['PUT /{db}/_security', 'PUT', '/db/_security', { members: { names: ['mallory'], roles: [] } }],
    ['POST /_users (creates a user)', 'POST', '/_users', { _id: 'org.couchdb.user:mallory', name: 'mallory', type: 'user', roles: [], password: 'x' }],
    ['PUT /_users/org.couchdb.user:{name}', 'PUT', '/_users/org.couchdb.user:mallory', { name: 'mallory', type: 'user', roles: [], password: 'x' }],
    ['POST /_users/_bulk_docs', 'POST', '/_users/_bulk_docs', { docs: [{ _id: 'org.couchdb.user:mallory', name: 'mallory', type: 'user', roles: [], password: 'x' }] }],
  ];

  for (const [title, method, path, json] of endpoints) {
    test(`${title} with a text/plain body and an admin cookie is 415 bad_content_type`, async () => {
      const res = await asForm(path, method, formText(json), 'text/plain');
      assert.equal(res.status, 415, res.text);
      assert.deepEqual(res.body, JSON_REQUIRED);
    });
  }

  test('nothing a refused request carried was written', async () => {
    for (const path of ['/db/_design/evil', '/db/bulk-evil', '/db/put-evil', '/db/_design/put-evil', '/db/_local/put-evil', '/_users/org.couchdb.user:mallory']) {
      assert.equal((await server.admin(path)).status, 404, path);
    }
    assert.deepEqual((await server.admin('/db/_security')).body, securityBefore);
  });

  const otherTypes: [string, string | undefined][] = [
    ['application/x-www-form-urlencoded (a plain form)', 'application/x-www-form-urlencoded'],
    ['multipart/form-data (a form with a file)', 'multipart/form-data; boundary=x'],
    ['multipart/related on a POST (a document with attachments comes by PUT)', 'multipart/related; boundary=x'],
    ['text/plain;charset=utf-8', 'text/plain;charset=utf-8'],
    ['an empty Content-Type', ''],
    ['no Content-Type at all, with a body', undefined],
    ['a JSON-like type that is not application/json', 'application/jsonx'],
  ];
  for (const [title, type] of otherTypes) {
    test(`${title} is 415 too`, async () => {
      const res = await asForm('/db', 'POST', formText({ _id: 'other-type' }), type);
      assert.equal(res.status, 415, res.text);
      assert.deepEqual(res.body, JSON_REQUIRED);
    });
  }

  test('application/json with parameters or in another case is accepted', async () => {
    assert.equal((await asForm('/db', 'POST', formText({ _id: 'charset' }), 'application/json; charset=utf-8')).status, 201);
    assert.equal((await asForm('/db', 'POST', formText({ _id: 'upper' }), 'Application/JSON')).status, 201);
  });

  test('a POST with no body and no Content-Type still works (_ensure_full_commit, _changes)', async () => {
    const commit = await server.request('/db/_ensure_full_commit', { method: 'POST', headers: { Cookie: adminCookie, 'Content-Length': '0' } });
    assert.equal(commit.status, 201, commit.text);
    const changes = await server.request('/db/_changes', { method: 'POST', headers: { Cookie: adminCookie } });
    assert.equal(changes.status, 200, changes.text);
  });

  test('an empty body that says text/plain is refused, as CouchDB does', async () => {
    const res = await asForm('/db/_ensure_full_commit', 'POST', '', 'text/plain');
    assert.equal(res.status, 415);
    assert.deepEqual(res.body, JSON_REQUIRED);
  });

  test('POST /_session keeps its form and JSON bodies and its own 415', async () => {
    const form = await server.request('/_session', {
      method: 'POST',
      body: `name=${ADMIN[0]}&password=${ADMIN[1]}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 200, form.text);
    const json = await server.request('/_session', { method: 'POST', body: { name: ADMIN[0], password: ADMIN[1] } });
    assert.equal(json.status, 200, json.text);
    const text = await server.request('/_session', { method: 'POST', body: `name=${ADMIN[0]}&password=${ADMIN[1]}`, headers: { 'Content-Type': 'text/plain' } });
    assert.equal(text.status, 415);
    assert.deepEqual(text.body, SESSION_TYPES);
  });

  test("PUT _config keeps CouchDB's curl idiom (a JSON string, any Content-Type): admins only, not reachable by a form", async () => {
    const res = await server.admin('/_node/_local/_config/uuids/max_count', { method: 'PUT', body: '"900"', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 200, res.text);
    assert.equal((await server.admin('/_node/_local/_config/uuids/max_count')).body, '900');
  });

  test('GET and DELETE are not checked: they carry no body Divan reads', async () => {
    const rev = (await server.admin('/db/existing')).body._rev as string;
    const res = await server.admin(`/db/existing?rev=${rev}`, { method: 'DELETE', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(res.status, 200, res.text);
  });

  test('the same writes with application/json succeed (the guard refuses only the type)', async () => {
    const res = await server.request('/db', { method: 'POST', body: { _id: '_design/allowed', views: {} }, headers: { Cookie: adminCookie } });
    assert.equal(res.status, 201, res.text);
  });
});
