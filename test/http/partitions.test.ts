// Partitioned databases, answered as CouchDB 3 answers them (chttpd_db, couch_partition, couch_mrview_util, mango).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('partitioned databases', (server) => {
  const admin = (path: string, options: Parameters<ReturnType<typeof server>['admin']>[1] = {}) => server().admin(path, options);
  before(async () => {
    assert.equal((await admin('/parts?partitioned=true', { method: 'PUT' })).status, 201);
    assert.equal((await admin('/plain', { method: 'PUT' })).status, 201);
    const docs = [];
    for (const p of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) docs.push({ _id: `${p}:doc${i}`, p, i });
    assert.equal((await admin('/parts/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
    await admin('/plain/x', { method: 'PUT', body: { v: 1 } });
  });

  test('GET / lists the partitioned feature; GET /{db} shows props', async () => {
    assert.ok((await admin('/')).body.features.includes('partitioned'));
    assert.deepEqual((await admin('/parts')).body.props, { partitioned: true });
    assert.deepEqual((await admin('/plain')).body.props, {});
    const infos = await admin('/_dbs_info', { method: 'POST', body: { keys: ['parts'] } });
    assert.deepEqual(infos.body[0].info.props, { partitioned: true });
  });

  test('PUT /{db}?partitioned=: false or absent makes a normal database, anything else is 400', async () => {
    assert.equal((await admin('/plain2?partitioned=false', { method: 'PUT' })).status, 201);
    assert.deepEqual((await admin('/plain2')).body.props, {});
    const bad = await admin('/plain3?partitioned=yes', { method: 'PUT' });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'bad_request', reason: 'Invalid `partitioned` parameter' }]);
    assert.equal((await admin('/plain3')).status, 404);
    const system = await admin('/x%2F_users?partitioned=true', { method: 'PUT' });
    assert.deepEqual([system.status, system.body.reason], [400, 'Cannot partition a system database']);
    const anonymous = await server().request('/plain4?partitioned=yes', { method: 'PUT' });
    assert.equal(anonymous.status, 401, 'who may create comes first');
  });

  test('_security neither shows nor loses the partitioned prop', async () => {
    const security = await admin('/parts/_security');
    assert.deepEqual(Object.keys(security.body).sort(), ['admins', 'members']);
    assert.equal((await admin('/parts/_security', { method: 'PUT', body: { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] }, divan_props: {} } })).status, 200);
    assert.deepEqual((await admin('/parts')).body.props, { partitioned: true });
    assert.equal((await admin('/parts/_security')).body.divan_props, undefined);
    assert.equal((await admin('/plain/_security', { method: 'PUT', body: { divan_props: { partitioned: true } } })).status, 200);
    assert.deepEqual((await admin('/plain')).body.props, {}, 'a client cannot partition a database through _security');
  });

  test('every write path wants partition:docid ids', async () => {
    const cases: [string, string, string][] = [
      ['nocolon', 'illegal_docid', 'Doc id must be of form partition:id'],
      ['_bad:x', 'illegal_docid', 'Only reserved document ids may start with underscore.'],
      [':x', 'illegal_partition', 'Partition must not be empty'],
      ['p:', 'illegal_docid', 'Document id must not be empty'],
      ['p:_x', 'illegal_docid', 'Only reserved document ids may start with underscore.'],
    ];
    for (const [id, error, reason] of cases) {
      const put = await admin(`/parts/${encodeURIComponent(id)}`, { method: 'PUT', body: {} });
      assert.deepEqual([put.status, put.body], [400, { error, reason }], `PUT ${id}`);
      const post = await admin('/parts', { method: 'POST', body: { _id: id } });
      assert.deepEqual([post.status, post.body], [400, { error, reason }], `POST ${id}`);
      const bulk = await admin('/parts/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'ok:1' }, { _id: id }] } });
      assert.deepEqual([bulk.status, bulk.body], [400, { error, reason }], `_bulk_docs ${id}`);
      const replicated = await admin('/parts/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ _id: id, _rev: '1-abc' }] } });
      assert.equal(replicated.status, 400, `replicated ${id}`);
    }
    assert.equal((await admin('/parts/ok:1')).status, 404, 'a refused batch writes nothing');
    const generated = await admin('/parts', { method: 'POST', body: {} });
    assert.deepEqual([generated.status, generated.body.reason], [400, 'Doc id must be of form partition:id']);
    const copy = await admin('/parts/a:doc0', { method: 'COPY', headers: { Destination: 'nocolon' } });
    assert.deepEqual([copy.status, copy.body.error], [400, 'illegal_docid']);
    assert.equal((await admin('/parts/a:doc0', { method: 'COPY', headers: { Destination: 'a:copy' } })).status, 201);
    const attachment = await admin('/parts/nocolon/note.txt', { method: 'PUT', body: 'hello', headers: { 'Content-Type': 'text/plain' } });
    assert.deepEqual([attachment.status, attachment.body.reason], [400, 'Doc id must be of form partition:id']);
    assert.equal((await admin('/parts/_design/free', { method: 'PUT', body: { options: { partitioned: false } } })).status, 201);
    assert.equal((await admin('/parts/_local/free', { method: 'PUT', body: {} })).status, 201);
    assert.equal((await admin('/plain/nocolon', { method: 'PUT', body: {} })).status, 201, 'a normal database takes any id');
  });

  test('GET /{db}/_partition/{p}: counts and sizes of one partition', async () => {
    await admin('/parts/c:gone', { method: 'PUT', body: {} }).then((res) => admin(`/parts/c:gone?rev=${res.body.rev}`, { method: 'DELETE' }));
    const info = await admin('/parts/_partition/c');
    assert.equal(info.status, 200);
    assert.deepEqual(Object.keys(info.body).sort(), ['db_name', 'doc_count', 'doc_del_count', 'partition', 'sizes']);
    assert.deepEqual([info.body.db_name, info.body.partition, info.body.doc_count, info.body.doc_del_count], ['parts', 'c', 3, 1]);
    assert.ok(info.body.sizes.external > 0 && info.body.sizes.active === info.body.sizes.external);
    const empty = await admin('/parts/_partition/none');
    assert.deepEqual([empty.body.doc_count, empty.body.doc_del_count, empty.body.sizes], [0, 0, { active: 0, external: 0 }]);
  });

  test('_partition errors: bad names, a normal database, other methods, unknown endpoints', async () => {
    const expect = async (path: string, status: number, error: string, reason: string, method = 'GET') => {
      const res = await admin(path, { method, ...(method === 'POST' ? { body: {} } : {}) });
      assert.deepEqual([res.status, res.body], [status, { error, reason }], `${method} ${path}`);
    };
    await expect('/parts/_partition', 400, 'bad_request', 'invalid_partition_req');
    await expect('/parts/_partition/_x', 400, 'illegal_partition', 'Partition must not start with an underscore');
    await expect('/parts/_partition/_x', 400, 'illegal_partition', 'Partition must not start with an underscore', 'POST');
    await expect('/parts/_partition/a', 405, 'method_not_allowed', 'Only GET allowed', 'POST');
    await expect('/plain/_partition/a', 400, 'bad_request', 'database is not partitioned');
    await expect('/plain/_partition/a/_all_docs', 400, 'bad_request', 'database is not partitioned');
    await expect('/parts/_partition/_x/_all_docs', 400, 'illegal_partition', 'Partition must not start with an underscore');
    await expect('/parts/_partition/a/_all_docs?partition=b', 400, 'bad_request', 'Conflicting value for `partition` in query string');
    await expect('/parts/_partition/a/_changes', 404, 'not_found', 'missing');
    await expect('/nodb/_partition/a', 404, 'not_found', 'Database does not exist.');
  });

  test('_all_docs of a partition is its id range, start and end keys narrowed to it', async () => {
    const ids = async (path: string) => (await admin(path)).body.rows.map((row: { id: string }) => row.id);
    assert.deepEqual(await ids('/parts/_partition/b/_all_docs'), ['b:doc0', 'b:doc1', 'b:doc2']);
    assert.deepEqual(await ids('/parts/_all_docs?partition=b&descending=true&limit=2'), ['b:doc2', 'b:doc1']);
    assert.deepEqual(await ids('/parts/_partition/b/_all_docs?start_key="a"&end_key="z"'), ['b:doc0', 'b:doc1', 'b:doc2']);
    assert.deepEqual(await ids('/parts/_partition/b/_all_docs?start_key="b:doc1"'), ['b:doc1', 'b:doc2']);
    const docs = await admin('/parts/_partition/a/_all_docs?include_docs=true&limit=1');
    assert.deepEqual(docs.body.rows[0].doc.p, 'a');
    assert.equal(docs.body.total_rows, (await admin('/parts')).body.doc_count, 'total_rows counts the database, as CouchDB');
    const queries = await admin('/parts/_partition/b/_all_docs/queries', { method: 'POST', body: { queries: [{ limit: 1 }, { descending: true, limit: 1 }] } });
    assert.deepEqual(queries.body.results.map((result: { rows: { id: string }[] }) => result.rows.map((row) => row.id)), [['b:doc0'], ['b:doc2']]);
    const plain = await admin('/plain/_all_docs?partition=a');
    assert.deepEqual([plain.status, plain.body], [400, { error: 'query_parse_error', reason: '`partition` parameter is not supported on this db' }]);
  });

  test('_find and _explain of a partition read that partition only', async () => {
    const found = await admin('/parts/_partition/c/_find', { method: 'POST', body: { selector: { i: { $gte: 1 } } } });
    assert.equal(found.status, 200);
    assert.deepEqual(found.body.docs.map((doc: { _id: string }) => doc._id), ['c:doc1', 'c:doc2']);
    const stats = await admin('/parts/_find', { method: 'POST', body: { selector: {}, partition: 'a', execution_stats: true } });
    assert.equal(stats.body.execution_stats.total_docs_examined, 4, 'a:doc0..2 and a:copy, no other partition');
    const explained = await admin('/parts/_partition/a/_explain', { method: 'POST', body: { selector: { i: 1 } } });
    assert.deepEqual([explained.body.partitioned, explained.body.opts.partition, explained.body.mrargs.partition, explained.body.index.type], [true, 'a', 'a', 'special']);
    const conflicting = await admin('/parts/_partition/a/_find', { method: 'POST', body: { selector: {}, partition: 'b' } });
    assert.equal(conflicting.status, 400);
    const badName = await admin('/parts/_find', { method: 'POST', body: { selector: {}, partition: '_x' } });
    assert.deepEqual([badName.status, badName.body.error], [400, 'illegal_partition']);
    const plain = await admin('/plain/_find', { method: 'POST', body: { selector: {}, partition: 'a' } });
    assert.deepEqual([plain.status, plain.body.reason], [400, 'database is not partitioned']);
    const global = await admin('/parts/_find', { method: 'POST', body: { selector: { i: 2 } } });
    assert.equal(global.body.docs.length, 3, 'a global query reads every partition');
  });

  test('views: partitioned by default in a partitioned database, global with options.partitioned false', async () => {
    const map = 'function (doc) { if (doc.p) emit(doc.i, null); }';
    assert.equal((await admin('/parts/_design/byp', { method: 'PUT', body: { views: { v: { map } } } })).status, 201);
    assert.equal((await admin('/parts/_design/glob', { method: 'PUT', body: { options: { partitioned: false }, views: { v: { map } } } })).status, 201);
    const global = await admin('/parts/_design/byp/_view/v');
    assert.deepEqual([global.status, global.body], [400, { error: 'query_parse_error', reason: '`partition` parameter is mandatory for queries to this view.' }]);
    const partitionOnGlobal = await admin('/parts/_partition/a/_design/glob/_view/v');
    assert.deepEqual([partitionOnGlobal.status, partitionOnGlobal.body], [400, { error: 'query_parse_error', reason: '`partition` parameter is not supported in this design doc' }]);
    assert.equal((await admin('/parts/_design/glob/_view/v')).body.rows.length, 10);
    const refused = await admin('/plain/_design/p', { method: 'PUT', body: { options: { partitioned: true }, views: { v: { map } } } });
    assert.deepEqual([refused.status, refused.body], [400, { error: 'invalid_design_doc', reason: 'partitioned option cannot be true in a non-partitioned database.' }]);
  });
});

describeOnEachBackend(
  'max_partition_size',
  (server) => {
    test('a write into a full partition is 403 partition_overflow; deletions, other partitions and replication pass', async () => {
      await server().admin('/small?partitioned=true', { method: 'PUT' });
      const first = await server().admin('/small/p:one', { method: 'PUT', body: { fill: 'x'.repeat(300) } });
      assert.equal(first.status, 201);
      const full = await server().admin('/small/p:two', { method: 'PUT', body: { v: 1 } });
      assert.deepEqual([full.status, full.body], [403, { error: 'partition_overflow', reason: "Partition limit exceeded due to update on 'p:two'" }]);
      const bulk = await server().admin('/small/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'p:three' }, { _id: 'q:one' }] } });
      assert.deepEqual(bulk.body.map((row: { error?: string }) => row.error ?? 'ok'), ['partition_overflow', 'ok']);
      const replicated = await server().admin('/small/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ _id: 'p:four', _rev: '1-abc' }] } });
      assert.equal(replicated.status, 201);
      assert.equal((await server().admin('/small/p:four')).status, 200);
      assert.equal((await server().admin(`/small/p:one?rev=${first.body.rev}`, { method: 'DELETE' })).status, 200);
      assert.equal((await server().admin('/small/p:two', { method: 'PUT', body: { v: 1 } })).status, 201, 'room again after the deletion');
    });
  },
  '[couchdb]\nmax_partition_size = 200\n',
);
