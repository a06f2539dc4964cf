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
    negotiated: 'function (doc) { provides("html", function () { return "<b>" + doc.title + "</b>"; }); provides("json", function () { return toJSON({ title: doc.title }); }); }',
    list_style: 'function (doc) { start({ "X-Couch-Test-Header": "Yeah" }); send("Hey "); return "there"; }',
    counted: 'function (doc, req) { return { body: String(Date.now()) + Math.random() }; }',
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

  test('provides chooses by Accept or ?format, and start/send output goes before the body (render.js runShow)', async () => {
    const html = await server.admin('/sh/_design/app/_show/negotiated/doc1', { headers: { Accept: 'text/html' } });
    assert.deepEqual([html.status, html.text, html.headers['content-type']], [200, '<b>First</b>', 'text/html; charset=utf-8']);
    const json = await server.admin('/sh/_design/app/_show/negotiated/doc1', { headers: { accept: 'application/json' } });
    assert.deepEqual([json.text, json.headers['content-type']], ['{"title":"First"}', 'application/json']);
    assert.equal((await server.admin('/sh/_design/app/_show/negotiated/doc1?format=json')).text, '{"title":"First"}');
    const first = await server.admin('/sh/_design/app/_show/negotiated/doc1');
    assert.equal(first.text, '<b>First</b>', 'without Accept the first provides answers');
    const refused = await server.admin('/sh/_design/app/_show/negotiated/doc1', { headers: { Accept: 'text/csv' } });
    assert.deepEqual([refused.status, refused.body.error], [406, 'not_acceptable']);
    const listStyle = await server.admin('/sh/_design/app/_show/list_style/doc1');
    assert.deepEqual([listStyle.status, listStyle.text, listStyle.headers['x-couch-test-header']], [200, 'Hey there', 'Yeah']);
  });

  test('the ETag names the document, design document, Accept and roles: If-None-Match answers 304 without running the function', async () => {
    const first = await server.admin('/sh/_design/app/_show/counted/doc1');
    const etag = first.headers['etag'] as string;
    assert.match(etag, /^"[0-9A-Z]+"$/);
    assert.equal(first.headers['vary'], 'Accept');
    const again = await server.admin('/sh/_design/app/_show/counted/doc1', { headers: { 'If-None-Match': etag } });
    assert.deepEqual([again.status, again.text, again.headers['etag'], again.headers['content-type']], [304, '', etag, undefined]);
    const otherAccept = await server.admin('/sh/_design/app/_show/counted/doc1', { headers: { 'If-None-Match': etag, Accept: 'text/plain' } });
    assert.equal(otherAccept.status, 200);
    assert.notEqual(otherAccept.headers['etag'], etag);
    const doc = await server.admin('/sh/doc1');
    assert.equal((await server.admin('/sh/doc1', { method: 'PUT', body: { ...doc.body, title: 'Changed' } })).status, 201);
    const changed = await server.admin('/sh/_design/app/_show/counted/doc1', { headers: { 'If-None-Match': etag } });
    assert.equal(changed.status, 200, 'a new revision of the document is a new ETag');
    assert.notEqual(changed.headers['etag'], etag);
    assert.equal((await server.admin('/sh/doc1', { method: 'PUT', body: { ...(await server.admin('/sh/doc1')).body, title: 'First' } })).status, 201);
  });
});
