import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKEND_SERVERS } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

for (const backend of BACKEND_SERVERS) {
  describe(`${backend.name}: views smoke`, () => {
    let server: TestServer;
    before(async () => {
      server = await backend.start();
      await server.admin('/v', { method: 'PUT' });
      const docs = Array.from({ length: 10 }, (_, i) => ({ _id: `d${i}`, n: i, type: i % 2 ? 'odd' : 'even' }));
      await server.admin('/v/_bulk_docs', { method: 'POST', body: { docs } });
      await server.admin('/v/_design/app', { method: 'PUT', body: { views: { by_type: { map: 'function (doc) { emit(doc.type, doc.n); }', reduce: '_sum' }, js: { map: 'function (doc) { emit(doc.n, 1); }', reduce: 'function (k, v, re) { return sum(v); }' } } } });
    });
    after(async () => server.close());

    test('map rows', async () => {
      const res = await server.admin('/v/_design/app/_view/by_type?reduce=false');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.total_rows, 10);
      const sum = await server.admin('/v/_design/app/_view/by_type?group=true');
      assert.deepEqual(sum.body.rows, [{ key: 'even', value: 20 }, { key: 'odd', value: 25 }]);
      const js = await server.admin('/v/_design/app/_view/js');
      assert.deepEqual(js.body.rows, [{ key: null, value: 10 }]);
    });
  });
}
