import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/** `_update` functions answer as CouchDB 3.5 (chttpd_show:handle_doc_update_req, render.js runUpdate). */
describe('update functions', () => {
  let server: TestServer;
  const updates = {
    stamp: 'function (doc, req) { if (!doc) { doc = { _id: req.id || req.uuid }; } doc.count = (doc.count || 0) + 1; doc.by = req.query.by; return [doc, "saved " + doc._id]; }',
    form: 'function (doc, req) { return [{ _id: req.form.name, title: req.form.title }, { json: { form: req.form, body: req.body } }]; }',
    echo: 'function (doc, req) { return [null, { code: 202, headers: { "X-Echo": req.method }, body: String(doc && doc._id) }]; }',
    binary: 'function () { return [null, { base64: "aGVsbG8=", headers: { "Content-Type": "text/plain" } }]; }',
    throws: 'function () { throw new Error("boom"); }',
    refuses: 'function () { throw { error: "forbidden", reason: "no way" }; }',
    bad_shape: 'function () { return 42; }',
    odd_member: 'function () { return [null, { nonsense: 1 }]; }',
    no_id: 'function () { return [{ title: "x" }, "ok"]; }',
    loops: 'function () { while (true) {} }',
  };

  before(async () => {
    server = await startServer({ ini: '[couchdb]\nos_process_timeout = 300\n' });
    await server.admin('/up', { method: 'PUT' });
    const vdu = 'function (doc) { if (doc.title === "forbidden") throw { forbidden: "title refused" }; }';
    assert.equal((await server.admin('/up/_design/app', { method: 'PUT', body: { updates, validate_doc_update: vdu } })).status, 201);
  });
  after(async () => server.close());

  test('POST without an id: doc is null, the returned document is written, 201 with X-Couch-Id and X-Couch-Update-NewRev', async () => {
    const res = await server.admin('/up/_design/app/_update/stamp?by=ann', { method: 'POST' });
    assert.equal(res.status, 201);
    assert.match(res.text, /^saved [0-9a-f]{32}$/);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['content-security-policy'], 'sandbox');
    const id = String(res.headers['x-couch-id']);
    const stored = await server.admin(`/up/${id}`);
    assert.equal(stored.body.count, 1);
    assert.equal(stored.body.by, 'ann');
    assert.equal(stored.body._rev, res.headers['x-couch-update-newrev']);
  });

  test('PUT with an id: the stored document is passed, and its next revision written', async () => {
    const first = await server.admin('/up/_design/app/_update/stamp/counter', { method: 'PUT' });
    assert.equal(first.status, 201);
    assert.equal(first.headers['x-couch-id'], 'counter');
    const second = await server.admin('/up/_design/app/_update/stamp/counter', { method: 'PUT' });
    assert.match(String(second.headers['x-couch-update-newrev']), /^2-/);
    assert.equal((await server.admin('/up/counter')).body.count, 2);
  });

  test('a form post is parsed into req.form; req.body is the text sent', async () => {
    const body = 'name=post1&title=Hello+there';
    const res = await server.admin('/up/_design/app/_update/form', { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 201);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.body, { form: { name: 'post1', title: 'Hello there' }, body });
    assert.equal((await server.admin('/up/post1')).body.title, 'Hello there');
  });

  test('no document returned: 200 or the function\'s code and headers; base64 bodies are decoded', async () => {
    const echo = await server.admin('/up/_design/app/_update/echo/counter', { method: 'PUT' });
    assert.equal(echo.status, 202);
    assert.equal(echo.headers['x-echo'], 'PUT');
    assert.equal(echo.text, 'counter');
    assert.equal(echo.headers['x-couch-id'], undefined);
    const missing = await server.admin('/up/_design/app/_update/echo/nothing-here', { method: 'PUT' });
    assert.equal(missing.text, 'null');
    const binary = await server.admin('/up/_design/app/_update/binary', { method: 'POST' });
    assert.equal(binary.status, 200);
    assert.equal(binary.text, 'hello');
    assert.equal(binary.headers['content-type'], 'text/plain');
  });

  test('the write goes through validate_doc_update', async () => {
    const res = await server.admin('/up/_design/app/_update/form', { method: 'POST', body: 'name=p2&title=forbidden', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { error: 'forbidden', reason: 'title refused' });
    assert.equal((await server.admin('/up/p2')).status, 404);
  });

  test('CouchDB\'s errors: missing function or design document, GET, throwing function, bad shapes, timeouts', async () => {
    const missing = await server.admin('/up/_design/app/_update/nope', { method: 'POST' });
    assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing json key: nope' }]);
    const noDdoc = await server.admin('/up/_design/none/_update/stamp', { method: 'POST' });
    assert.deepEqual([noDdoc.status, noDdoc.body], [404, { error: 'not_found', reason: 'missing' }]);
    const get = await server.admin('/up/_design/app/_update/stamp');
    assert.deepEqual([get.status, get.body], [405, { error: 'method_not_allowed', reason: 'Update functions do not allow GET' }]);
    const thrown = await server.admin('/up/_design/app/_update/throws', { method: 'POST' });
    assert.equal(thrown.status, 500);
    assert.equal(thrown.body.error, 'render_error');
    assert.match(thrown.body.reason, /^function raised error: Error: boom/);
    const refused = await server.admin('/up/_design/app/_update/refuses', { method: 'POST' });
    assert.deepEqual([refused.status, refused.body], [403, { error: 'forbidden', reason: 'no way' }]);
    const shape = await server.admin('/up/_design/app/_update/bad_shape', { method: 'POST' });
    assert.deepEqual([shape.status, shape.body], [500, { error: 'render_error', reason: 'undefined response from update function' }]);
    const odd = await server.admin('/up/_design/app/_update/odd_member', { method: 'POST' });
    assert.deepEqual([odd.status, odd.body.error], [500, 'external_response_error']);
    const noId = await server.admin('/up/_design/app/_update/no_id', { method: 'POST' });
    assert.deepEqual([noId.status, noId.body], [400, { error: 'illegal_docid', reason: 'Document id must not be empty' }]);
    const loops = await server.admin('/up/_design/app/_update/loops', { method: 'POST' });
    assert.deepEqual([loops.status, loops.body.error], [500, 'os_process_error']);
  });
});
