import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { seqNumber } from '../support/sequences.js';

const REV = /^\d+-[0-9a-f]{32}$/;

describe('documents', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/docs', { method: 'PUT' });
  });
  after(async () => server.close());

  test('PUT a new document: 201, {ok,id,rev}, ETag and Location', async () => {
    const res = await server.admin('/docs/first', { method: 'PUT', body: { a: 1 } });
    assert.equal(res.status, 201);
    assert.equal(res.body.ok, true);
    assert.equal(res.body.id, 'first');
    assert.match(res.body.rev, /^1-[0-9a-f]{32}$/);
    assert.equal(res.headers['etag'], `"${res.body.rev}"`);
    assert.equal(res.headers['location'], `${server.url}/docs/first`);
  });

  test('GET a document: _id and _rev first, then its fields; ETag is the rev', async () => {
    const put = await server.admin('/docs/read', { method: 'PUT', body: { z: 1, a: [1, 2], nested: { x: null } } });
    const res = await server.admin('/docs/read');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['_id', '_rev', 'z', 'a', 'nested']);
    assert.deepEqual(res.body, { _id: 'read', _rev: put.body.rev, z: 1, a: [1, 2], nested: { x: null } });
    assert.equal(res.headers['etag'], `"${put.body.rev}"`);
    const cached = await server.admin('/docs/read', { headers: { 'If-None-Match': `"${put.body.rev}"` } });
    assert.equal(cached.status, 304);
  });

  test('update with the current rev gives 2-…; a stale rev gives 409 conflict', async () => {
    const first = await server.admin('/docs/upd', { method: 'PUT', body: { v: 1 } });
    const second = await server.admin('/docs/upd', { method: 'PUT', body: { _rev: first.body.rev, v: 2 } });
    assert.equal(second.status, 201);
    assert.match(second.body.rev, /^2-/);
    const stale = await server.admin('/docs/upd', { method: 'PUT', body: { _rev: first.body.rev, v: 3 } });
    assert.equal(stale.status, 409);
    assert.deepEqual(stale.body, { error: 'conflict', reason: 'Document update conflict.' });
    const noRev = await server.admin('/docs/upd', { method: 'PUT', body: { v: 4 } });
    assert.equal(noRev.status, 409);
    assert.equal((await server.admin('/docs/upd')).body.v, 2, 'nothing was lost or overwritten');
  });

  test('the rev may come from ?rev= or If-Match; a different _rev in the body is 400', async () => {
    const first = await server.admin('/docs/viaquery', { method: 'PUT', body: {} });
    const second = await server.admin(`/docs/viaquery?rev=${first.body.rev}`, { method: 'PUT', body: { x: 1 } });
    assert.equal(second.status, 201);
    const third = await server.admin('/docs/viaquery', { method: 'PUT', body: { x: 2 }, headers: { 'If-Match': `"${second.body.rev}"` } });
    assert.equal(third.status, 201);
    const mismatch = await server.admin(`/docs/viaquery?rev=${third.body.rev}`, { method: 'PUT', body: { _rev: first.body.rev } });
    assert.equal(mismatch.status, 400);
    assert.deepEqual(mismatch.body, { error: 'bad_request', reason: 'Document rev from request body and query string have different values' });
  });

  test('DELETE with the rev leaves a tombstone: GET says deleted, ?rev= still reads it', async () => {
    const put = await server.admin('/docs/gone', { method: 'PUT', body: { a: 1 } });
    const noRev = await server.admin('/docs/gone', { method: 'DELETE' });
    assert.equal(noRev.status, 409);
    const del = await server.admin(`/docs/gone?rev=${put.body.rev}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal(del.body.ok, true);
    assert.match(del.body.rev, /^2-/);
    const get = await server.admin('/docs/gone');
    assert.equal(get.status, 404);
    assert.deepEqual(get.body, { error: 'not_found', reason: 'deleted' });
    const byRev = await server.admin(`/docs/gone?rev=${del.body.rev}`);
    assert.equal(byRev.status, 200);
    assert.deepEqual(byRev.body, { _id: 'gone', _rev: del.body.rev, _deleted: true });
    const again = await server.admin('/docs/gone', { method: 'PUT', body: { back: true } });
    assert.equal(again.status, 201);
    assert.match(again.body.rev, /^3-/, 'recreation continues the revision history');
  });

  test('GET of a missing document is 404 missing', async () => {
    const res = await server.admin('/docs/never');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'not_found', reason: 'missing' });
  });

  test('?revs=true gives _revisions; ?conflicts=true lists conflicts made by new_edits=false', async () => {
    const one = await server.admin('/docs/branchy', { method: 'PUT', body: { side: 'a' } });
    const two = await server.admin('/docs/branchy', { method: 'PUT', body: { _rev: one.body.rev, side: 'a2' } });
    const revs = await server.admin('/docs/branchy?revs=true');
    assert.deepEqual(revs.body._revisions, { start: 2, ids: [two.body.rev.slice(2), one.body.rev.slice(2)] });
    const hash = 'f'.repeat(32);
    const bulk = await server.admin('/docs/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'branchy', _rev: `2-${hash}`, _revisions: { start: 2, ids: [hash, one.body.rev.slice(2)] }, side: 'b' }] },
    });
    assert.equal(bulk.status, 201);
    assert.deepEqual(bulk.body, []);
    const res = await server.admin('/docs/branchy?conflicts=true');
    assert.equal(res.body._rev, `2-${hash}`, 'the higher hash wins at equal generation');
    assert.deepEqual(res.body._conflicts, [two.body.rev]);
    const plain = await server.admin('/docs/branchy');
    assert.equal(plain.body._conflicts, undefined);
  });

  test('POST /{db} creates with a generated id or the given _id', async () => {
    const generated = await server.admin('/docs', { method: 'POST', body: { x: 1 } });
    assert.equal(generated.status, 201);
    assert.match(generated.body.id, /^[0-9a-f]{32}$/);
    assert.match(generated.body.rev, REV);
    const named = await server.admin('/docs', { method: 'POST', body: { _id: 'chosen', x: 1 } });
    assert.equal(named.body.id, 'chosen');
    const again = await server.admin('/docs', { method: 'POST', body: { _id: 'chosen', x: 2 } });
    assert.equal(again.status, 409);
  });

  test('invalid JSON is 400 bad_request invalid UTF-8 JSON; a non-object document is 400', async () => {
    const bad = await server.admin('/docs/badjson', { method: 'PUT', body: '{"a":', headers: { 'Content-Type': 'application/json' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'bad_request', reason: 'invalid UTF-8 JSON' });
    const invalidUtf8 = await server.admin('/docs/badutf', {
      method: 'PUT',
      body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(invalidUtf8.status, 400);
    const array = await server.admin('/docs/arr', { method: 'PUT', body: [1] });
    assert.equal(array.status, 400);
    assert.deepEqual(array.body, { error: 'bad_request', reason: 'Document must be a JSON object' });
  });

  test('ids starting with _ other than _design/_local are 400 illegal_docid; unknown _members are doc_validation', async () => {
    const res = await server.admin('/docs', { method: 'POST', body: { _id: '_nope' } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'illegal_docid', reason: 'Only reserved document ids may start with underscore.' });
    const member = await server.admin('/docs/special', { method: 'PUT', body: { _weird: 1 } });
    assert.equal(member.status, 400);
    assert.deepEqual(member.body, { error: 'doc_validation', reason: 'Bad special document member: _weird' });
  });

  test('a nested member named __proto__ is stored as data and never pollutes anything', async () => {
    const res = await server.admin('/docs/proto', { method: 'PUT', body: '{"a":{"__proto__":{"polluted":true}},"constructor":{"prototype":{"x":1}}}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(res.status, 201);
    const get = await server.admin('/docs/proto');
    assert.deepEqual(JSON.parse(get.text).a, JSON.parse('{"__proto__":{"polluted":true}}'));
    assert.deepEqual(get.body.constructor, { prototype: { x: 1 } });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    const top = await server.admin('/docs/proto2', { method: 'PUT', body: '{"__proto__":{"polluted":true}}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(top.status, 400, 'a top-level member starting with _ is not a user field, as in CouchDB');
    assert.deepEqual(top.body, { error: 'doc_validation', reason: 'Bad special document member: __proto__' });
  });

  test('ids with slashes, unicode and spaces round-trip when encoded', async () => {
    for (const id of ['a/b', 'ünïcødé ✓', 'with space', 'x%y']) {
      const put = await server.admin(`/docs/${encodeURIComponent(id)}`, { method: 'PUT', body: { id } });
      assert.equal(put.status, 201, id);
      assert.equal(put.body.id, id);
      const get = await server.admin(`/docs/${encodeURIComponent(id)}`);
      assert.equal(get.body._id, id);
    }
  });

  test('design documents are stored as documents and need a db admin to write', async () => {
    const put = await server.admin('/docs/_design/app', { method: 'PUT', body: { views: {} } });
    assert.equal(put.status, 201);
    assert.equal(put.body.id, '_design/app');
    const get = await server.admin('/docs/_design/app');
    assert.equal(get.body._id, '_design/app');
    await server.admin('/pubdocs', { method: 'PUT' });
    await server.admin('/pubdocs/_security', { method: 'PUT', body: {} });
    const anon = await server.request('/pubdocs/_design/app', { method: 'PUT', body: {} });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.body, { error: 'unauthorized', reason: 'You are not a db or server admin.' });
    const anonDoc = await server.request('/pubdocs/plain', { method: 'PUT', body: {} });
    assert.equal(anonDoc.status, 201, 'members (everyone here) may write ordinary documents');
  });

  test('_local documents: 0-N revisions, conflicts, delete, not in _all_docs', async () => {
    const put = await server.admin('/docs/_local/check', { method: 'PUT', body: { seq: 1 } });
    assert.equal(put.status, 201);
    assert.deepEqual(put.body, { ok: true, id: '_local/check', rev: '0-1' });
    const get = await server.admin('/docs/_local/check');
    assert.deepEqual(get.body, { _id: '_local/check', _rev: '0-1', seq: 1 });
    const stale = await server.admin('/docs/_local/check', { method: 'PUT', body: { seq: 2 } });
    assert.equal(stale.status, 409);
    const next = await server.admin('/docs/_local/check', { method: 'PUT', body: { _rev: '0-1', seq: 2 } });
    assert.equal(next.body.rev, '0-2');
    const all = await server.admin('/docs/_all_docs');
    assert.ok(!all.body.rows.some((row: { id: string }) => row.id.startsWith('_local/')));
    const del = await server.admin('/docs/_local/check?rev=0-2', { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal((await server.admin('/docs/_local/check')).status, 404);
  });

  test('documents of a missing database are 404 Database does not exist.', async () => {
    const res = await server.admin('/nodb/doc', { method: 'PUT', body: {} });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'not_found', reason: 'Database does not exist.' });
  });

  test('anonymous reads of an admin_only database are 401', async () => {
    const res = await server.request('/docs/first');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized', reason: 'You are not authorized to access this db.' });
  });

  test('PATCH on a document is 405 with Allow', async () => {
    const res = await server.admin('/docs/first', { method: 'PATCH', body: {} });
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'DELETE,GET,HEAD,POST,PUT');
  });
});

describe('_all_docs and _bulk_docs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/list', { method: 'PUT' });
    await server.admin('/list/_bulk_docs', { method: 'POST', body: { docs: ['c', 'a', 'e', 'b', 'd'].map((id) => ({ _id: id, n: id })) } });
  });
  after(async () => server.close());

  test('_bulk_docs answers 201 with one {ok,id,rev} per document, in order', async () => {
    await server.admin('/bulk', { method: 'PUT' });
    const res = await server.admin('/bulk/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'x' }, { _id: 'y' }, { v: 1 }] } });
    assert.equal(res.status, 201);
    assert.equal(res.body.length, 3);
    assert.deepEqual(res.body.slice(0, 2).map((row: { id: string }) => row.id), ['x', 'y']);
    for (const row of res.body) {
      assert.equal(row.ok, true);
      assert.match(row.rev, REV);
    }
    const conflict = await server.admin('/bulk/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'x' }, { _id: 'z' }] } });
    assert.deepEqual(conflict.body[0], { id: 'x', error: 'conflict', reason: 'Document update conflict.' });
    assert.equal(conflict.body[1].ok, true);
  });

  test('_bulk_docs without docs is 400', async () => {
    const res = await server.admin('/list/_bulk_docs', { method: 'POST', body: { nodocs: [] } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'POST body must include `docs` parameter.' });
    const notArray = await server.admin('/list/_bulk_docs', { method: 'POST', body: { docs: {} } });
    assert.deepEqual(notArray.body, { error: 'bad_request', reason: '`docs` parameter must be an array.' });
  });

  test('_all_docs lists ids in order with total_rows and offset', async () => {
    const res = await server.admin('/list/_all_docs');
    assert.equal(res.status, 200);
    assert.equal(res.body.total_rows, 5);
    assert.equal(res.body.offset, 0);
    assert.deepEqual(res.body.rows.map((row: { id: string }) => row.id), ['a', 'b', 'c', 'd', 'e']);
    const first = res.body.rows[0];
    assert.deepEqual(Object.keys(first), ['id', 'key', 'value']);
    assert.equal(first.key, 'a');
    assert.match(first.value.rev, REV);
  });

  test('_all_docs startkey/endkey/inclusive_end/limit/skip/descending', async () => {
    const ids = async (query: string): Promise<string[]> => (await server.admin(`/list/_all_docs?${query}`)).body.rows.map((row: { id: string }) => row.id);
    assert.deepEqual(await ids('startkey="b"&endkey="d"'), ['b', 'c', 'd']);
    assert.deepEqual(await ids('start_key="b"&end_key="d"&inclusive_end=false'), ['b', 'c']);
    assert.deepEqual(await ids('limit=2&skip=1'), ['b', 'c']);
    assert.deepEqual(await ids('descending=true&startkey="d"&limit=2'), ['d', 'c']);
    const skipped = await server.admin('/list/_all_docs?skip=2');
    assert.equal(skipped.body.offset, 2);
  });

  test('_all_docs include_docs and keys (GET and POST)', async () => {
    const docs = await server.admin('/list/_all_docs?include_docs=true&limit=1');
    assert.deepEqual(Object.keys(docs.body.rows[0].doc), ['_id', '_rev', 'n']);
    assert.equal(docs.body.rows[0].doc.n, 'a');
    const keys = await server.admin('/list/_all_docs', { method: 'POST', body: { keys: ['e', 'nope', 'a'] } });
    assert.equal(keys.status, 200);
    assert.deepEqual(keys.body.rows.map((row: { id?: string; key: string; error?: string }) => row.id ?? row.error), ['e', 'not_found', 'a']);
    const viaQuery = await server.admin(`/list/_all_docs?keys=${encodeURIComponent('["b"]')}`);
    assert.deepEqual(viaQuery.body.rows.map((row: { id: string }) => row.id), ['b']);
  });

  test('_all_docs shows a deleted key as value.deleted with doc null', async () => {
    const put = await server.admin('/list/temp', { method: 'PUT', body: {} });
    await server.admin(`/list/temp?rev=${put.body.rev}`, { method: 'DELETE' });
    const res = await server.admin('/list/_all_docs?include_docs=true', { method: 'POST', body: { keys: ['temp'] } });
    assert.equal(res.body.rows[0].value.deleted, true);
    assert.equal(res.body.rows[0].doc, null);
    const listed = await server.admin('/list/_all_docs');
    assert.ok(!listed.body.rows.some((row: { id: string }) => row.id === 'temp'), 'deleted docs are not listed');
  });

  test('_all_docs rejects a bad boolean and bad JSON keys with 400', async () => {
    const bool = await server.admin('/list/_all_docs?descending=yes');
    assert.equal(bool.status, 400);
    assert.deepEqual(bool.body, { error: 'query_parse_error', reason: 'Invalid boolean parameter: "yes"' });
    const json = await server.admin('/list/_all_docs?startkey=notjson');
    assert.equal(json.status, 400);
    assert.equal(json.body.error, 'bad_request');
  });

  test('_changes lists each document once at its latest change, since filters', async () => {
    await server.admin('/feed', { method: 'PUT' });
    const a = await server.admin('/feed/a', { method: 'PUT', body: {} });
    await server.admin('/feed/b', { method: 'PUT', body: {} });
    await server.admin('/feed/a', { method: 'PUT', body: { _rev: a.body.rev } });
    const res = await server.admin('/feed/_changes');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((row: { id: string }) => row.id), ['b', 'a']);
    assert.equal(seqNumber(res.body.last_seq), 3);
    const since = await server.admin('/feed/_changes?since=2');
    assert.deepEqual(since.body.results.map((row: { id: string }) => row.id), ['a']);
  });
});
