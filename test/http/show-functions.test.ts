import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/** `_show` functions answer as CouchDB 3.5 (chttpd_show:handle_doc_show_req, render.js runShow). */
describe('show functions', () => {
  let server: TestServer;
  const shows = {
    title: 'function (doc, req) { return "<h1>" + (doc ? doc.title : "none") + "</h1>" + (req.query.x || ""); }',
    json: 'function (doc, req) { return { json: { id: req.id, method: req.method, body: req.body, self: this._id } }; }',
    custom: 'function () { return { code: 418, headers: { "Content-Type": "text/plain", "Content-Security-Policy": "default-src none" }, body: "tea" }; }',
    empty: 'function () { return null; }',
    needs_doc: 'function (doc) { return doc.title; }',
    number: 'function () { return 7; }',
  };

  before(async () => {
    server = await startServer();
    await server.admin('/sh', { method: 'PUT' });
    assert.equal((await server.admin('/sh/_design/app', { method: 'PUT', body: { shows } })).status, 201);
    assert.equal((await server.admin('/sh/a%2Fb', { method: 'PUT', body: { title: 'Slashed' } })).status, 201);
    assert.equal((await server.admin('/sh/doc1', { method: 'PUT', body: { title: 'First' } })).status, 201);
  });
  after(async () => server.close());

  test('with and without a document; ids of several path segments are joined', async () => {
    const one = await server.admin('/sh/_design/app/_show/title/doc1?x=!');
    assert.deepEqual([one.status, one.text, one.headers['content-type']], [200, '<h1>First</h1>!', 'text/html; charset=utf-8']);
    assert.equal(one.headers['content-security-policy'], 'sandbox');
    assert.equal((await server.admin('/sh/_design/app/_show/title')).text, '<h1>none</h1>');
    assert.equal((await server.admin('/sh/_design/app/_show/title/missing')).text, '<h1>none</h1>');
    assert.equal((await server.admin('/sh/_design/app/_show/title/a/b')).text, '<h1>Slashed</h1>');
  });

  test('json responses, POST bodies and the design document as this', async () => {
    const res = await server.admin('/sh/_design/app/_show/json/doc1', { method: 'POST', body: 'raw text' });
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.body, { id: 'doc1', method: 'POST', body: 'raw text', self: '_design/app' });
  });

  test('the function\'s code and headers; the server\'s policy goes on top of its own', async () => {
    const res = await server.admin('/sh/_design/app/_show/custom');
    assert.deepEqual([res.status, res.text, res.headers['content-type']], [418, 'tea', 'text/plain']);
    assert.equal(res.headers['content-security-policy'], 'sandbox, default-src none');
    const empty = await server.admin('/sh/_design/app/_show/empty');
    assert.deepEqual([empty.status, empty.text], [200, '']);
  });

  test('CouchDB\'s errors: missing function, missing document with a throwing function, bad return, other methods', async () => {
    const missing = await server.admin('/sh/_design/app/_show/nope');
    assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing json key: nope' }]);
    const noDoc = await server.admin('/sh/_design/app/_show/needs_doc/ghost');
    assert.deepEqual([noDoc.status, noDoc.body], [404, { error: 'not_found', reason: 'document not found' }]);
    const noId = await server.admin('/sh/_design/app/_show/needs_doc');
    assert.deepEqual([noId.status, noId.body.error], [500, 'render_error']);
    const number = await server.admin('/sh/_design/app/_show/number');
    assert.deepEqual([number.status, number.body], [500, { error: 'render_error', reason: 'undefined response from show function' }]);
    const put = await server.admin('/sh/_design/app/_show/title', { method: 'PUT', body: {} });
    assert.equal(put.status, 405);
  });
});
