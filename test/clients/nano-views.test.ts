// Real client: nano 11 `view()` (GET, and POST with keys) against the real binary.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nano from 'nano';
import { ADMIN, createDatabase, startClientServer, type ClientServer } from '../support/clients.js';

describe('nano 11 view() against the real binary', () => {
  let server: ClientServer;
  let db: nano.DocumentScope<{ type: string; n: number }>;

  before(async () => {
    server = await startClientServer();
    await createDatabase(server.url, 'nano-views', []);
    const url = new URL(server.url);
    url.username = ADMIN[0];
    url.password = ADMIN[1];
    db = nano(url.toString()).use('nano-views');
    await db.bulk({ docs: [{ _id: 'a', type: 'x', n: 1 }, { _id: 'b', type: 'y', n: 2 }, { _id: 'c', type: 'x', n: 3 }] });
    await db.insert({ _id: '_design/app', views: { by_type: { map: 'function (doc) { emit(doc.type, doc.n); }', reduce: '_sum' } } } as never);
  });
  after(async () => server?.close());

  test('map rows, reduced groups and POSTed keys', async () => {
    const rows = await db.view('app', 'by_type', { reduce: false });
    assert.equal(rows.total_rows, 3);
    assert.deepEqual(rows.rows.map((row) => [row.key, row.id]), [['x', 'a'], ['x', 'c'], ['y', 'b']]);
    const grouped = await db.view('app', 'by_type', { group: true });
    assert.deepEqual(grouped.rows, [{ key: 'x', value: 4 }, { key: 'y', value: 2 }]);
    const keyed = await db.view('app', 'by_type', { keys: ['y', 'x'], reduce: false });
    assert.deepEqual(keyed.rows.map((row) => row.id), ['b', 'a', 'c']);
  });

  test('a missing view rejects with 404', async () => {
    await assert.rejects(db.view('app', 'nothere'), (error: { statusCode?: number }) => error.statusCode === 404);
  });
});
