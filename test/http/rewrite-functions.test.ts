import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { request as httpRequest } from 'node:http';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { ADMIN } from '../support/server.js';

/** A GET whose path goes on the wire exactly as written. */
function rawGet(base: string, path: string): Promise<{ status: number; text: string }> {
  const url = new URL(base);
  const auth = `Basic ${Buffer.from(ADMIN.join(':')).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { Authorization: auth } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject).end();
  });
}

/** `_rewrite` answers as CouchDB 3.5 (chttpd_rewrite.erl, couch_query_servers:rewrite, render.js runRewrite). */
const shows = {
  echo: 'function (doc, req) { return { json: { id: doc && doc._id, query: req.query, method: req.method, body: req.body, path: req.path } }; }',
};
const updates = {
  stamp: 'function (doc, req) { doc = doc || { _id: req.id }; doc.word = req.body; return [doc, "stamped"]; }',
};
const views = { by_n: { map: 'function (doc) { if (doc.n) emit(doc.n, null); }' } };
const rules = [
  { from: '/doc/:id', to: '_show/echo/:id' },
  { from: '/put/:id', to: '_update/stamp/:id', method: 'PUT' },
  { from: '/range/:low/:high', to: '_view/by_n', query: { startkey: ':low', endkey: ':high' }, formats: { low: 'int', high: 'int' } },
  { from: '/fixed', to: '_show/echo', query: { key: [':a', 'b'], plain: 'text' } },
  { from: '/all/*', to: '../../*' },
  { from: '/loop', to: '_rewrite/loop' },
  { from: '/dot/*', to: '_show/echo/*' },
];
const fn = `function (req) {
  var p = req.path.slice(4);
  if (p[0] === 'show') return '_show/echo/' + p[1];
  if (p[0] === 'post') return { path: '_show/echo', method: 'POST', query: { via: 'fn' }, body: 'given' };
  if (p[0] === 'keep') return { path: '_show/echo' };
  if (p[0] === 'early') return { code: 451, headers: { 'X-Foo': 'bar', 'Content-Type': 'application/json' }, body: '{"early":true}' };
  if (p[0] === 'uuids') return '../../../_uuids';
  if (p[0] === 'changes') return { path: '../../_changes', query: { filter: '_doc_ids' } };
  if (p[0] === 'loop') return '_rewrite/loop';
  if (p[0] === 'throws') throw new Error('boom');
  if (p[0] === 'forbidden') throw { forbidden: 'no entry' };
  if (p[0] === 'badpath') return { path: 7 };
  if (p[0] === 'nopath') return { method: 'GET' };
  if (p[0] === 'badcode') return { code: 99 };
}`;

describeOnEachBackend('rewrite functions', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);

  before(async () => {
    assert.equal((await admin('/rw', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/rw/_design/rules', { method: 'PUT', body: { rewrites: rules, shows, updates, views } })).status, 201);
    assert.equal((await admin('/rw/_design/fn', { method: 'PUT', body: { rewrites: fn, shows } })).status, 201);
    assert.equal((await admin('/rw/_design/none', { method: 'PUT', body: { shows } })).status, 201);
    assert.equal((await admin('/rw/_design/insecure', { method: 'PUT', body: { rewrites: [{ from: '/doc', to: '_show/echo' }, { from: '/x', to: '../../../_uuids' }] } })).status, 201);
    const docs = [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }, { _id: 'c', n: 3 }, { _id: 'd', n: 4 }];
    assert.equal((await admin('/rw/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });

  test('rules: :var bindings in the path, method rules, and every binding also in the query', async () => {
    const shown = await admin('/rw/_design/rules/_rewrite/doc/a?x=1');
    assert.equal(shown.status, 200);
    assert.deepEqual([shown.body.id, shown.body.query], ['a', { x: '1', id: 'a' }]);
    assert.deepEqual(shown.body.path, ['rw', '_design', 'rules', '_show', 'echo', 'a']);
    const put = await admin('/rw/_design/rules/_rewrite/put/new1', { method: 'PUT', body: 'hello', headers: { 'Content-Type': 'text/plain' } });
    assert.deepEqual([put.status, put.text], [201, 'stamped']);
    assert.equal((await admin('/rw/new1')).body.word, 'hello');
    const wrongMethod = await admin('/rw/_design/rules/_rewrite/put/new2');
    assert.deepEqual([wrongMethod.status, wrongMethod.body], [404, { error: 'not_found', reason: 'missing' }]);
  });

  test('rules: query values from bindings with formats, JSON keys, * and ../.. within the database', async () => {
    const range = await admin('/rw/_design/rules/_rewrite/range/2/3');
    assert.deepEqual(range.body.rows.map((row: { id: string }) => row.id), ['b', 'c']);
    const fixed = await admin('/rw/_design/rules/_rewrite/fixed?a=z');
    assert.deepEqual(fixed.body.query, { key: '["z","b"]', plain: 'text', a: 'z' });
    const doc = await admin('/rw/_design/rules/_rewrite/all/a');
    assert.deepEqual([doc.status, doc.body._id, doc.body.n], [200, 'a', 1]);
    const info = await admin('/rw/_design/rules/_rewrite/all/');
    assert.equal(info.body.db_name, 'rw');
  });

  test('rules: paths leaving the database are refused while secure_rewrites holds', async () => {
    // As CouchDB, every rule is read for every request: one insecure rule fails them all.
    const root = await admin('/rw/_design/insecure/_rewrite/doc');
    assert.deepEqual([root.status, root.body], [500, { error: 'insecure_rewrite_rule', reason: 'too many ../.. segments' }]);
    // Sent as is (a URL object would resolve the dots before sending): a `*` binding of `..` segments.
    const dotted = await rawGet(server().url, '/rw/_design/rules/_rewrite/dot/../../../../../../_uuids');
    assert.deepEqual([dotted.status, JSON.parse(dotted.text).error], [500, 'insecure_rewrite_rule']);
    const bad = await admin('/rw/_design/insecure/_rewrite/x');
    assert.deepEqual([bad.status, bad.body.error], [500, 'insecure_rewrite_rule']);
    assert.equal((await admin('/_node/_local/_config/chttpd/secure_rewrites', { method: 'PUT', body: '"false"' })).status, 200);
    try {
      const allowed = await admin('/rw/_design/insecure/_rewrite/x');
      assert.deepEqual([allowed.status, allowed.body.uuids.length], [200, 1]);
    } finally {
      await admin('/_node/_local/_config/chttpd/secure_rewrites', { method: 'DELETE' });
    }
  });

  test('a function: a path string, an object with method, query and body, the request\'s query kept, an answer of its own', async () => {
    const shown = await admin('/rw/_design/fn/_rewrite/show/a?q=1');
    assert.deepEqual([shown.body.id, shown.body.query, shown.body.method], ['a', { q: '1' }, 'GET']);
    const posted = await admin('/rw/_design/fn/_rewrite/post?q=1');
    assert.deepEqual([posted.body.method, posted.body.body, posted.body.query], ['POST', 'given', { via: 'fn' }]);
    const kept = await admin('/rw/_design/fn/_rewrite/keep?k=v', { method: 'POST', body: { sent: 1 } });
    assert.deepEqual([kept.body.method, kept.body.body, kept.body.query], ['POST', '{"sent":1}', { k: 'v' }]);
    const early = await admin('/rw/_design/fn/_rewrite/early');
    assert.deepEqual([early.status, early.headers['x-foo'], early.headers['content-type'], early.body], [451, 'bar', 'application/json', { early: true }]);
    const uuids = await admin('/rw/_design/fn/_rewrite/uuids');
    assert.equal(uuids.body.uuids.length, 1);
    const changes = await admin('/rw/_design/fn/_rewrite/changes', { method: 'POST', body: { doc_ids: ['b'] } });
    assert.deepEqual(changes.body.results.map((row: { id: string }) => row.id), ['b']);
  });

  test('the rewritten request keeps the caller and the database\'s authorization', async () => {
    const anonymous = await server().request('/rw/_design/fn/_rewrite/show/a');
    assert.equal(anonymous.status, 401);
    assert.equal((await admin('/rw2', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/rw2/_security', { method: 'PUT', body: { members: { names: [], roles: [] }, admins: { names: [], roles: [] } } })).status, 200);
    assert.equal((await admin('/rw2/_design/open', { method: 'PUT', body: { rewrites: [{ from: '*', to: '../../../rw/a' }] } })).status, 201);
    await admin('/_node/_local/_config/chttpd/secure_rewrites', { method: 'PUT', body: '"false"' });
    try {
      assert.equal((await server().request('/rw2/_design/open')).status, 200);
      assert.equal((await server().request('/rw2/_design/open/_rewrite/x')).status, 401);
      assert.equal((await admin('/rw2/_design/open/_rewrite/x')).body._id, 'a');
    } finally {
      await admin('/_node/_local/_config/chttpd/secure_rewrites', { method: 'DELETE' });
    }
  });

  test('CouchDB\'s errors: no rewrites, no function result, recursion limit, a throwing function, bad returns', async () => {
    const none = await admin('/rw/_design/none/_rewrite/x');
    assert.deepEqual([none.status, none.body], [404, { error: 'rewrite_error', reason: 'Invalid path.' }]);
    const nothing = await admin('/rw/_design/fn/_rewrite/nothing');
    assert.deepEqual([nothing.status, nothing.body], [404, { error: 'rewrite_error', reason: 'Invalid path.' }]);
    for (const path of ['/rw/_design/fn/_rewrite/loop', '/rw/_design/rules/_rewrite/loop']) {
      const loop = await admin(path);
      assert.deepEqual([loop.status, loop.body], [400, { error: 'bad_request', reason: 'Exceeded rewrite recursion limit' }]);
    }
    const thrown = await admin('/rw/_design/fn/_rewrite/throws');
    assert.deepEqual([thrown.status, thrown.body], [500, { error: 'rewrite_error', reason: 'function raised error: Error: boom' }]);
    const forbidden = await admin('/rw/_design/fn/_rewrite/forbidden');
    assert.deepEqual([forbidden.status, forbidden.body], [403, { error: 'forbidden', reason: 'no entry' }]);
    const badPath = await admin('/rw/_design/fn/_rewrite/badpath');
    assert.deepEqual([badPath.status, badPath.body], [500, { error: 'rewrite_error', reason: 'bad path' }]);
    const noPath = await admin('/rw/_design/fn/_rewrite/nopath');
    assert.deepEqual([noPath.status, noPath.body], [500, { error: 'rewrite_error', reason: 'Rewrite result must produce a new path.' }]);
    const badCode = await admin('/rw/_design/fn/_rewrite/badcode');
    assert.deepEqual([badCode.status, badCode.body], [500, { error: 'rewrite_error', reason: 'bad code' }]);
    assert.equal((await admin('/rw/_design/ghost/_rewrite/x')).status, 404);
  });
});
