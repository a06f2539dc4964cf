import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { collectResponse } from '../support/http.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

/** Documents and HTTP details, each answered as CouchDB 3.5 answers it (chttpd.erl, chttpd_db.erl, couch_doc.erl). */
describe('CouchDB details: documents and HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/details', { method: 'PUT' });
  });
  after(async () => server.close());

  test('a + in a document path is a space, as CouchDB decodes it (decode_plus_to_space)', async () => {
    const put = await server.admin('/details/plus+sign', { method: 'PUT', body: { v: 1 } });
    assert.equal(put.status, 201);
    assert.equal(put.body.id, 'plus sign');
    assert.equal((await server.admin('/details/plus%20sign')).body.v, 1);
    assert.equal((await server.admin('/details/plus%2Bsign')).status, 404, '%2B still names a plus');
  });

  test('[chttpd] decode_plus_to_space = false keeps the + of a path', async () => {
    await server.admin('/_node/_local/_config/chttpd/decode_plus_to_space', { method: 'PUT', body: '"false"', headers: { 'X-Couch-Persist': 'false' } });
    try {
      const put = await server.admin('/details/kept+plus', { method: 'PUT', body: {} });
      assert.equal(put.body.id, 'kept+plus');
    } finally {
      await server.admin('/_node/_local/_config/chttpd/decode_plus_to_space', { method: 'DELETE', headers: { 'X-Couch-Persist': 'false' } });
    }
  });

  test('DELETE of a missing document is 404 missing, of a deleted one 404 deleted', async () => {
    const missing = await server.admin('/details/never-written', { method: 'DELETE' });
    assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing' }]);
    const put = await server.admin('/details/gone', { method: 'PUT', body: {} });
    const removed = await server.admin(`/details/gone?rev=${put.body.rev}`, { method: 'DELETE' });
    assert.equal(removed.status, 200);
    const again = await server.admin(`/details/gone?rev=${removed.body.rev}`, { method: 'DELETE' });
    assert.deepEqual([again.status, again.body], [404, { error: 'not_found', reason: 'deleted' }]);
  });

  test('?batch=ok answers 202 {"ok":true,"id"} with no revision and no Location; the document is written', async () => {
    const put = await server.admin('/details/batched?batch=ok', { method: 'PUT', body: { v: 'put' } });
    assert.deepEqual([put.status, put.body], [202, { ok: true, id: 'batched' }]);
    assert.equal(put.headers['location'], undefined);
    const post = await server.admin('/details?batch=ok', { method: 'POST', body: { _id: 'batched-post', v: 'post' } });
    assert.deepEqual([post.status, post.body], [202, { ok: true, id: 'batched-post' }]);
    assert.equal((await server.admin('/details/batched')).body.v, 'put');
    assert.equal((await server.admin('/details/batched-post')).body.v, 'post');
  });

  test('_bulk_docs with all_or_nothing: true is 417 not_implemented per document and writes nothing', async () => {
    const res = await server.admin('/details/_bulk_docs', { method: 'POST', body: { all_or_nothing: true, docs: [{ _id: 'aon-a' }, { _id: 'aon-b', _rev: '1-967a00dff5e02add41819138abb3284d' }] } });
    assert.equal(res.status, 417);
    assert.deepEqual(res.body, [
      { id: 'aon-a', rev: '0-', error: 'not_implemented', reason: 'all_or_nothing is not supported' },
      { id: 'aon-b', rev: '1-967a00dff5e02add41819138abb3284d', error: 'not_implemented', reason: 'all_or_nothing is not supported' },
    ]);
    assert.equal((await server.admin('/details/aon-a')).status, 404);
  });

  test('w above 1 cannot be met by one node: 202 (accepted rows in _bulk_docs); w=1 and r are 201/200', async () => {
    const put = await server.admin('/details/quorum?w=2', { method: 'PUT', body: {} });
    assert.equal(put.status, 202);
    assert.equal(put.body.ok, true);
    assert.ok(put.headers['location']);
    assert.equal((await server.admin('/details/quorum-one?w=1', { method: 'PUT', body: {} })).status, 201);
    assert.equal((await server.admin('/details/quorum?r=3')).status, 200);
    const bulk = await server.admin('/details/_bulk_docs', { method: 'POST', body: { w: 3, docs: [{ _id: 'quorum-bulk' }] } });
    assert.equal(bulk.status, 202);
    assert.deepEqual(Object.keys(bulk.body[0]), ['ok', 'id', 'rev', 'accepted']);
    assert.equal(bulk.body[0].accepted, true);
    const viaQuery = await server.admin('/details/_bulk_docs?w=2', { method: 'POST', body: { docs: [{ _id: 'quorum-bulk-2' }] } });
    assert.equal(viaQuery.status, 202);
  });

  test('PUT /db/_local, /db/_local/ and /db/_local%2F are 400 Invalid _local document id.; /db/_local/a/b names an attachment', async () => {
    for (const path of ['/details/_local', '/details/_local/', '/details/_local%2F']) {
      const res = await server.admin(path, { method: 'PUT', body: {} });
      assert.deepEqual([res.status, res.body], [400, { error: 'bad_request', reason: 'Invalid _local document id.' }], path);
    }
    const nested = await server.admin('/details/_local/foo/bar', { method: 'PUT', body: {} });
    assert.deepEqual([nested.status, nested.body], [400, { error: 'bad_request', reason: '_local documents do not accept attachments.' }]);
  });

  test('ids that are not strings, empty or start with _ are 400 illegal_docid, in _bulk_docs too', async () => {
    const numeric = await server.admin('/details', { method: 'POST', body: { _id: 1 } });
    assert.deepEqual([numeric.status, numeric.body], [400, { error: 'illegal_docid', reason: 'Document id must be a string' }]);
    const empty = await server.admin('/details', { method: 'POST', body: { _id: '' } });
    assert.deepEqual([empty.status, empty.body], [400, { error: 'illegal_docid', reason: 'Document id must not be empty' }]);
    const reserved = await server.admin('/details/_foo', { method: 'PUT', body: {} });
    assert.deepEqual([reserved.status, reserved.body], [400, { error: 'illegal_docid', reason: 'Only reserved document ids may start with underscore.' }]);
    const bulk = await server.admin('/details/_bulk_docs', { method: 'POST', body: { docs: [{ _id: '_foo' }] } });
    assert.deepEqual([bulk.status, bulk.body.error], [400, 'illegal_docid']);
    const bulkNumeric = await server.admin('/details/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 7 }] } });
    assert.deepEqual([bulkNumeric.status, bulkNumeric.body.error], [400, 'illegal_docid']);
  });

  test('a _local document body may carry its own _id: the path decides, as CouchDB', async () => {
    const put = await server.admin('/details/_local/mine', { method: 'PUT', body: { _id: 'something-else', v: 1 } });
    assert.deepEqual([put.status, put.body.id], [201, '_local/mine']);
    assert.deepEqual((await server.admin('/details/_local/mine')).body, { _id: '_local/mine', _rev: '0-1', v: 1 });
  });

  test('If-None-Match with the weak form of the current ETag is 304', async () => {
    const put = await server.admin('/details/etagged', { method: 'PUT', body: {} });
    for (const query of ['', '?revs=true']) {
      const res = await server.admin(`/details/etagged${query}`, { headers: { 'If-None-Match': `W/"${put.body.rev}"` } });
      assert.equal(res.status, 304, query);
    }
    const other = await server.admin('/details/etagged', { headers: { 'If-None-Match': 'W/"1-0000"' } });
    assert.equal(other.status, 200);
  });

  test('X-Couch-Request-ID is echoed when it is at most 36 of [0-9A-Za-z_-], else a fresh one', async () => {
    const echoed = await server.request('/', { headers: { 'X-Couch-Request-ID': 'client-Id_42' } });
    assert.equal(echoed.headers['x-couch-request-id'], 'client-Id_42');
    const refused = await server.request('/', { headers: { 'X-Couch-Request-ID': 'bad id!' } });
    assert.notEqual(refused.headers['x-couch-request-id'], 'bad id!');
    assert.match(String(refused.headers['x-couch-request-id']), /^[0-9a-f]+$/);
    const tooLong = await server.request('/', { headers: { 'X-Couch-Request-ID': 'a'.repeat(37) } });
    assert.notEqual(tooLong.headers['x-couch-request-id'], 'a'.repeat(37));
  });

  test('X-CouchDB-Body-Time is on every answer: milliseconds spent reading the body, 0 without one', async () => {
    const read = await server.request('/');
    assert.equal(read.headers['x-couchdb-body-time'], '0');
    const written = await server.admin('/details/timed', { method: 'PUT', body: { v: 1 } });
    assert.match(String(written.headers['x-couchdb-body-time']), /^\d+$/);
    const failed = await server.request('/nope-db');
    assert.equal(failed.headers['x-couchdb-body-time'], '0');
  });

  test('X-HTTP-Method-Override turns a POST into the named method; other methods ignore it', async () => {
    await server.admin('/details/overridden', { method: 'PUT', body: { v: 1 } });
    const read = await server.admin('/details/overridden', { method: 'POST', headers: { 'X-HTTP-Method-Override': 'GET' } });
    assert.deepEqual([read.status, read.body.v], [200, 1]);
    const put = await server.admin('/details/override-put', { method: 'POST', body: { v: 2 }, headers: { 'X-HTTP-Method-Override': 'PUT' } });
    assert.deepEqual([put.status, put.body.id], [201, 'override-put']);
    const ignored = await server.admin('/details/overridden', { method: 'GET', headers: { 'X-HTTP-Method-Override': 'DELETE' } });
    assert.equal(ignored.status, 200);
    assert.equal((await server.admin('/details/overridden')).status, 200, 'still there');
  });

  test('?callback= is ignored: JSONP is off, as in CouchDB 3 without [httpd] allow_jsonp', async () => {
    const res = await server.request('/?callback=steal');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.body.couchdb, 'Welcome');
  });

  test('Location follows X-Forwarded-Host from a trusted proxy, and is on 201s of documents, _local documents and databases', async () => {
    const forwarded = await server.admin('/details/forwarded', { method: 'PUT', body: {}, headers: { 'X-Forwarded-Host': 'couch.example.org' } });
    assert.equal(forwarded.headers['location'], 'http://couch.example.org/details/forwarded');
    const local = await server.admin('/details/_local/placed', { method: 'PUT', body: {} });
    assert.equal(local.status, 201);
    assert.match(String(local.headers['location']), /\/details\/_local\/placed$/);
    const db = await server.admin('/details-located', { method: 'PUT' });
    assert.equal(db.status, 201);
    assert.match(String(db.headers['location']), /\/details-located$/);
    const colon = await server.admin('/details/a:b%20c', { method: 'PUT', body: {} });
    assert.match(String(colon.headers['location']), /\/details\/a:b%20c$/, 'encoded as couch_util:url_encode: the colon kept');
    const posted = await server.admin('/details', { method: 'POST', body: {} });
    assert.match(String(posted.headers['location']), new RegExp(`/details/${posted.body.id}$`));
  });

  test('GET /db/_design%2Fname redirects (301) to /db/_design/name, query kept; a PUT there writes the design document', async () => {
    const put = await server.admin('/details/_design%2Fslashed', { method: 'PUT', body: { language: 'javascript' } });
    assert.deepEqual([put.status, put.body.id], [201, '_design/slashed']);
    const res = await server.admin('/details/_design%2Fslashed?revs=true');
    assert.equal(res.status, 301);
    assert.match(String(res.headers['location']), /\/details\/_design\/slashed\?revs=true$/);
    const followed = await server.request(new URL(String(res.headers['location'])).pathname + '?revs=true', { auth: ADMIN });
    assert.equal(followed.body._id, '_design/slashed');
  });

  test('longpoll _changes sends its status line and headers before any change arrives', async () => {
    await server.admin('/details-feed', { method: 'PUT' });
    const url = new URL(`${server.url}/details-feed/_changes?feed=longpoll&since=now&timeout=20000`);
    const auth = `Basic ${Buffer.from(ADMIN.join(':')).toString('base64')}`;
    // The write below happens only once the headers are in: a feed holding them back until its
    // first change would end at its timeout without the change.
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { Authorization: auth }, agent: false }, resolve).on('error', reject).end();
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    await server.admin('/details-feed/after-headers', { method: 'PUT', body: {} });
    const body = (await collectResponse(res)).body;
    assert.deepEqual(body.results.map((row: { id: string }) => row.id), ['after-headers']);
  });

  test('error reasons are worded as CouchDB words them', async () => {
    const noDocs = await server.admin('/details/_bulk_docs', { method: 'POST', body: {} });
    assert.deepEqual(noDocs.body, { error: 'bad_request', reason: 'POST body must include `docs` parameter.' });
    const bodyKeys = await server.admin('/details/_all_docs', { method: 'POST', body: { keys: 'a' } });
    assert.deepEqual(bodyKeys.body, { error: 'bad_request', reason: '`keys` body member must be an array.' });
    const queryKeys = await server.admin('/details/_all_docs?keys=%22a%22');
    assert.deepEqual(queryKeys.body, { error: 'bad_request', reason: '`keys` parameter must be an array.' });
    const etag = await server.admin('/details/etag-rev?rev=1-967a00dff5e02add41819138abb3284d', { method: 'PUT', body: {}, headers: { 'If-Match': '"2-967a00dff5e02add41819138abb3284d"' } });
    assert.deepEqual(etag.body, { error: 'bad_request', reason: 'Document rev and etag have different values' });
  });
});
