import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/**
 * Issue 32 item 14: what one document's map function may emit is bounded (rows and characters of
 * JSON, `[query_server_config]`); past a bound that document's map fails as a throwing map does
 * (no rows, logged), the other documents keep theirs, even when the function catches the error.
 */
describe('the rows one document may emit are bounded', () => {
  let server: TestServer;
  const views = {
    rows: { map: 'function (doc) { for (var i = 0; i < doc.rows; i++) emit([doc._id, i], null); }' },
    chars: { map: 'function (doc) { for (var i = 0; i < 5; i++) emit(doc._id, new Array(doc.width + 1).join("x")); }' },
    caught: { map: 'function (doc) { for (var i = 0; i < 1000; i++) { try { emit(doc._id, i); } catch (e) {} } }' },
  };
  const rowsOf = async (view: string): Promise<{ id: string }[]> => {
    const res = await server.admin(`/emits/_design/app/_view/${view}`);
    assert.equal(res.status, 200);
    return res.body.rows;
  };

  before(async () => {
    server = await startServer({ ini: '[query_server_config]\nmax_emits_per_doc = 100\nmax_emit_bytes_per_doc = 10000\n' });
    assert.equal((await server.admin('/emits', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/emits/_design/app', { method: 'PUT', body: { views } })).status, 201);
    const docs = [{ _id: 'small', rows: 100, width: 1000 }, { _id: 'many', rows: 101, width: 10 }, { _id: 'wide', rows: 1, width: 5000 }];
    assert.equal((await server.admin('/emits/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });
  after(async () => server.close());

  test('issue 32 item 14: a document emitting more rows than max_emits_per_doc gets no rows, logged; the others keep theirs', async () => {
    const rows = await rowsOf('rows');
    assert.deepEqual([...new Set(rows.map((row) => row.id))].sort(), ['small', 'wide']);
    assert.equal(rows.length, 101);
    assert.ok(server.logs.some((line) => line.includes('"many"') && line.includes('emit_limit')), 'the skipped document is logged');
  });

  test('issue 32 item 14: a document emitting more JSON than max_emit_bytes_per_doc gets no rows', async () => {
    const rows = await rowsOf('chars');
    assert.deepEqual([...new Set(rows.map((row) => row.id))].sort(), ['many', 'small']);
  });

  test('issue 32 item 14: a map function that catches the bound\'s error and goes on emitting still gets no rows', async () => {
    assert.deepEqual(await rowsOf('caught'), []);
    const failures = server.logs.filter((line) => line.includes('emits/_design/app/caught: map function failed'));
    assert.equal(failures.length, 3);
    assert.ok(failures.every((line) => line.includes('emit_limit')), failures.join('\n'));
  });
});
