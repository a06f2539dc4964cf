/**
 * Security issue 32 item 12: `_all_docs`/`_bulk_get` with 200 000 keys held a process 4.2 s and
 * built a 103 MB answer in one piece. Now `keys` is bounded (`[couchdb] max_keys_count`, a 400),
 * `_bulk_get` too (`[couchdb] max_bulk_get_count`, CouchDB's 413), and both answers are streamed
 * (chunked) while other clients are answered. "Answered meanwhile" counts probes, not time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { startServer, type TestServer } from '../support/server.js';

const DB = 'keys';
const DOCS = 2000;

describe('issue 32 item 12: long key lists are bounded and streamed', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
    assert.equal((await server.admin(`/${DB}`, { method: 'PUT' })).status, 201);
    const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: `d${i}`, v: i }));
    assert.equal((await server.admin(`/${DB}/_bulk_docs`, { method: 'POST', body: { docs } })).status, 201);
    const view = { views: { byV: { map: 'function (doc) { emit(doc.v, null); }' } } };
    assert.equal((await server.admin(`/${DB}/_design/app`, { method: 'PUT', body: view })).status, 201);
  });
  after(async () => server.close());

  /** Runs `setting = value` for the duration of `body`. */
  async function withSetting(section: string, key: string, value: string, body: () => Promise<void>): Promise<void> {
    const path = `/_node/_local/_config/${section}/${key}`;
    assert.equal((await server.admin(path, { method: 'PUT', body: JSON.stringify(value) })).status, 200);
    try {
      await body();
    } finally {
      await server.admin(path, { method: 'DELETE' });
    }
  }

  /** Sends `path` and probes `GET /_up` back to back until it is answered; the probes answered meanwhile. */
  async function probedWhile(path: string, body: unknown) {
    let pending = true;
    const heavy = server.admin(path, { method: 'POST', body }).finally(() => (pending = false));
    let answered = 0;
    while (pending) {
      assert.equal((await server.request('/_up')).status, 200);
      if (pending) answered++;
    }
    return { answer: await heavy, answered };
  }

  test('issue 32 item 12: _all_docs with more keys than [couchdb] max_keys_count answers 400 (POST, GET, _all_docs/queries, views)', async () => {
    await withSetting('couchdb', 'max_keys_count', '1000', async () => {
      const keys = Array.from({ length: 1001 }, (_, i) => `d${i}`);
      const posted = await server.admin(`/${DB}/_all_docs`, { method: 'POST', body: { keys } });
      assert.equal(posted.status, 400, posted.text);
      assert.deepEqual(posted.body, { error: 'bad_request', reason: '`keys` may hold at most 1000 keys ([couchdb] max_keys_count).' });
      const got = await server.admin(`/${DB}/_all_docs?keys=${encodeURIComponent(JSON.stringify(keys))}`);
      assert.equal(got.status, 400, got.text);
      const queries = await server.admin(`/${DB}/_all_docs/queries`, { method: 'POST', body: { queries: [{ keys: keys.slice(0, 600) }, { keys: keys.slice(600) }] } });
      assert.equal(queries.status, 400, queries.text);
      const view = await server.admin(`/${DB}/_design/app/_view/byV`, { method: 'POST', body: { keys: keys.map((_, i) => i) } });
      assert.equal(view.status, 400, view.text);
      const within = await server.admin(`/${DB}/_all_docs`, { method: 'POST', body: { keys: keys.slice(0, 1000) } });
      assert.equal(within.status, 200, within.text);
      assert.equal(within.body.rows.length, 1000);
    });
  });

  test('issue 32 item 12: _bulk_get of more documents than [couchdb] max_bulk_get_count answers 413 max_bulk_get_count_exceeded', async () => {
    await withSetting('couchdb', 'max_bulk_get_count', '100', async () => {
      const docs = Array.from({ length: 101 }, (_, i) => ({ id: `d${i}` }));
      const refused = await server.admin(`/${DB}/_bulk_get`, { method: 'POST', body: { docs } });
      assert.equal(refused.status, 413, refused.text);
      assert.deepEqual(refused.body, { error: 'max_bulk_get_count_exceeded', reason: '100' });
      const within = await server.admin(`/${DB}/_bulk_get`, { method: 'POST', body: { docs: docs.slice(0, 100) } });
      assert.equal(within.status, 200, within.text);
      assert.equal(within.body.results.length, 100);
    });
  });

  test('issue 32 item 12: _all_docs with 30 000 keys is streamed (chunked), right, and other clients are answered meanwhile', async () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `d${i % (DOCS + 500)}`);
    const { answer, answered } = await probedWhile(`/${DB}/_all_docs?include_docs=true`, { keys });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['transfer-encoding'], 'chunked');
    assert.equal(answer.headers['content-length'], undefined);
    assert.equal(answer.body.total_rows, DOCS + 1);
    assert.equal(answer.body.rows.length, keys.length);
    assert.deepEqual(answer.body.rows[1], { id: 'd1', key: 'd1', value: { rev: answer.body.rows[1].value.rev }, doc: { _id: 'd1', _rev: answer.body.rows[1].value.rev, v: 1 } });
    assert.deepEqual(answer.body.rows[DOCS + 1], { key: `d${DOCS + 1}`, error: 'not_found' });
    assert.ok(answered >= 3, `only ${answered} probes were answered during the listing`);
  });

  test('issue 32 item 12: _all_docs with keys keeps skip, limit and descending', async () => {
    const res = await server.admin(`/${DB}/_all_docs?skip=1&limit=2&descending=true`, { method: 'POST', body: { keys: ['d1', 'd2', 'nope', 'd3'] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.rows.map((row: { key: string }) => row.key),
      ['nope', 'd2'],
    );
    const empty = await server.admin(`/${DB}/_all_docs`, { method: 'POST', body: { keys: [] } });
    assert.deepEqual(empty.body, { total_rows: DOCS + 1, offset: null, rows: [] });
  });

  test('issue 32 item 12: _bulk_get of 10 000 documents is streamed (chunked), right, and other clients are answered meanwhile', async () => {
    const docs = Array.from({ length: 10_000 }, (_, i) => ({ id: `d${i % (DOCS + 100)}` }));
    const { answer, answered } = await probedWhile(`/${DB}/_bulk_get`, { docs });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['transfer-encoding'], 'chunked');
    assert.equal(answer.body.results.length, docs.length);
    assert.equal(answer.body.results[5].docs[0].ok.v, 5);
    assert.equal(answer.body.results[DOCS + 5].docs[0].error.error, 'not_found');
    assert.ok(answered >= 3, `only ${answered} probes were answered during the _bulk_get`);
  });

  test('issue 32 item 3: a view query with 5 000 keys lets other clients through, and answers right', async () => {
    // Built first: building the index runs in the sandbox, outside the event loop.
    assert.equal((await server.admin(`/${DB}/_design/app/_view/byV?limit=0`)).status, 200);
    const keys = Array.from({ length: 5000 }, (_, i) => i % (DOCS + 100));
    const { answer, answered } = await probedWhile(`/${DB}/_design/app/_view/byV`, { keys });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.rows.length, keys.filter((key) => key < DOCS).length);
    assert.deepEqual(answer.body.rows[7], { id: 'd7', key: 7, value: null });
    assert.ok(answered >= 3, `only ${answered} probes were answered during the view query`);
  });
});
