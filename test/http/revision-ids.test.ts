/**
 * Revision ids as CouchDB takes them (issue 23): any text after `N-` (PouchDB sends `2-x`, `1-`,
 * `3-totally_fake_rev`, `_revisions.ids` like `"some"`), `_revisions` deciding over `_rev`, and the
 * `_replication_*` members CouchDB keeps in ordinary documents.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const MD5 = '0123456789abcdef0123456789abcdef';
const INVALID_REV = { error: 'bad_request', reason: 'Invalid rev format' };

describe('revision ids that are not hex', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/revs', { method: 'PUT' });
  });
  after(async () => server.close());

  const replicate = (docs: unknown[]) => server.admin('/revs/_bulk_docs', { method: 'POST', body: { new_edits: false, docs } });

  test('_bulk_docs new_edits:false stores 2-x and 2-y as conflicting leaves; 2-y wins', async () => {
    const res = await replicate([
      { _id: 'xy', _rev: '2-x', _revisions: { start: 2, ids: ['x', 'a'] }, v: 'x' },
      { _id: 'xy', _rev: '2-y', _revisions: { start: 2, ids: ['y', 'a'] }, v: 'y' },
    ]);
    assert.deepEqual([res.status, res.body], [201, []]);
    const doc = await server.admin('/revs/xy?conflicts=true&revs=true');
    assert.deepEqual(doc.body, { _id: 'xy', _rev: '2-y', v: 'y', _revisions: { start: 2, ids: ['y', 'a'] }, _conflicts: ['2-x'] });
    const loser = await server.admin('/revs/xy?rev=2-x');
    assert.deepEqual([loser.status, loser.body._rev, loser.body.v], [200, '2-x', 'x']);
    const all = await server.admin('/revs/xy?open_revs=all', { headers: { Accept: 'application/json' } });
    assert.deepEqual(all.body.map((row: { ok: { _rev: string } }) => row.ok._rev).sort(), ['2-x', '2-y']);
  });

  test('a bare 1- with new_edits:false is stored and read back by ?rev=1-', async () => {
    const res = await replicate([{ _id: 'bare', _rev: '1-', integer: 1 }]);
    assert.deepEqual([res.status, res.body], [201, []]);
    const doc = await server.admin('/revs/bare?rev=1-');
    assert.deepEqual(doc.body, { _id: 'bare', _rev: '1-', integer: 1 });
  });

  test('_revisions ids like "some" extend a document with an MD5 root, via PUT ?new_edits=false', async () => {
    const root = await server.admin('/revs/tree', { method: 'PUT', body: { v: 1 } });
    const rootId = root.body.rev.slice(2);
    const put = await server.admin('/revs/tree?new_edits=false', {
      method: 'PUT',
      body: { _rev: '3-bbb', _deleted: true, _revisions: { start: 3, ids: ['bbb', 'some', rootId] } },
    });
    assert.equal(put.status, 201);
    const other = await server.admin('/revs/tree?new_edits=false', {
      method: 'PUT',
      body: { _rev: '4-ccc', v: 'z', _revisions: { start: 4, ids: ['ccc', 'even', 'more', rootId] } },
    });
    assert.equal(other.status, 201);
    const doc = await server.admin('/revs/tree?revs=true&deleted_conflicts=true');
    assert.deepEqual(doc.body, { _id: 'tree', _rev: '4-ccc', v: 'z', _revisions: { start: 4, ids: ['ccc', 'even', 'more', rootId] }, _deleted_conflicts: ['3-bbb'] });
  });

  test('#6039: a _rev the document never had (3-totally_fake_rev) is a 409 row for that document alone; the rest are written', async () => {
    const first = await server.admin('/revs/_bulk_docs', { method: 'POST', body: { docs: ['0', '1', '2', '3', '4'].map((_id) => ({ _id })) } });
    const docs = first.body.map((row: { id: string; rev: string }) => ({ _id: row.id, _rev: row.rev, n: 2 }));
    docs[2]._rev = '3-totally_fake_rev';
    delete docs[4]._rev;
    const res = await server.admin('/revs/_bulk_docs', { method: 'POST', body: { docs } });
    assert.equal(res.status, 201);
    const conflict = { error: 'conflict', reason: 'Document update conflict.' };
    assert.deepEqual(res.body[2], { id: '2', ...conflict });
    assert.deepEqual(res.body[4], { id: '4', ...conflict });
    for (const i of [0, 1, 3]) assert.match(res.body[i].rev, /^2-[0-9a-f]{32}$/, `doc ${i} written`);
    assert.equal((await server.admin('/revs/3')).body.n, 2);
    assert.equal((await server.admin('/revs/2')).body.n, undefined);
  });

  test('GET ?rev=2-g of a revision the document lacks is 404 missing, not 400', async () => {
    await server.admin('/revs/g', { method: 'PUT', body: {} });
    const res = await server.admin('/revs/g?rev=2-g');
    assert.deepEqual([res.status, res.body], [404, { error: 'not_found', reason: 'missing' }]);
  });

  test('a PUT or DELETE naming a non-hex revision the document lacks is 409 conflict', async () => {
    const put = await server.admin('/revs/d', { method: 'PUT', body: {} });
    assert.equal((await server.admin('/revs/d', { method: 'PUT', body: { _rev: '1-x' } })).status, 409);
    assert.equal((await server.admin('/revs/d?rev=1-x', { method: 'DELETE' })).status, 409);
    assert.equal((await server.admin(`/revs/d?rev=${put.body.rev}`, { method: 'DELETE' })).status, 200);
  });

  test('an MD5 id in upper case names the same revision, as CouchDB stores it (lower case)', async () => {
    const res = await replicate([{ _id: 'upper', _rev: `1-${MD5.toUpperCase()}` }]);
    assert.equal(res.status, 201);
    assert.equal((await server.admin('/revs/upper')).body._rev, `1-${MD5}`);
    assert.equal((await server.admin(`/revs/upper?rev=1-${MD5.toUpperCase()}`)).body._rev, `1-${MD5}`);
    const diff = await server.admin('/revs/_revs_diff', { method: 'POST', body: { upper: [`1-${MD5.toUpperCase()}`, '2-x'] } });
    assert.deepEqual(diff.body, { upper: { missing: ['2-x'], possible_ancestors: [`1-${MD5}`] } });
  });

  test('what CouchDB refuses is still 400 for the whole request: no dash, a bad generation, 32 bytes that are not hex', async () => {
    for (const rev of ['x', '-x', 'a-b', '+1-x', `1-${'g'.repeat(32)}`]) {
      const res = await replicate([{ _id: 'fine', _rev: '1-ok' }, { _id: 'bad', _rev: rev }]);
      assert.deepEqual([res.status, res.body], [400, INVALID_REV], rev);
      const get = await server.admin(`/revs/g?rev=${encodeURIComponent(rev)}`);
      assert.deepEqual([get.status, get.body], [400, INVALID_REV], `GET ?rev=${rev}`);
    }
    assert.equal((await server.admin('/revs/fine')).status, 404, 'nothing of a refused batch was written');
  });

  test('_revisions ids are refused as CouchDB refuses them: not a string, 32 bytes that are not hex', async () => {
    const refused = async (ids: unknown[], reason: string) => {
      const res = await replicate([{ _id: 'ids', _revisions: { start: 2, ids } }]);
      assert.deepEqual([res.status, res.body], [400, { error: 'doc_validation', reason }], JSON.stringify(ids));
    };
    await refused(['b', 1], "RevId isn't a string");
    await refused(['b', 'g'.repeat(32)], "RevId isn't a valid hexadecimal");
    const start = await replicate([{ _id: 'ids', _revisions: { start: '2', ids: ['b'] } }]);
    assert.deepEqual(start.body, { error: 'doc_validation', reason: "_revisions.start isn't an integer." });
  });

  test('NUL and lone surrogates in a revision are 400, never stored, never a 500', async () => {
    const bodies = [
      '{"new_edits":false,"docs":[{"_id":"nul","_rev":"1-a\\u0000"}]}',
      '{"new_edits":false,"docs":[{"_id":"nul","_rev":"1-\\ud800"}]}',
      '{"new_edits":false,"docs":[{"_id":"nul","_revisions":{"start":1,"ids":["\\udc00"]}}]}',
      '{"new_edits":false,"docs":[{"_id":"nul","_revisions":{"start":1,"ids":["a\\u0000"]}}]}',
    ];
    for (const body of bodies) {
      const res = await server.admin('/revs/_bulk_docs', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
      assert.equal(res.status, 400, body);
      assert.equal(typeof res.body.reason, 'string');
    }
    assert.equal((await server.admin('/revs/g?rev=1-%00')).status, 400);
    assert.equal((await server.admin('/revs/nul')).status, 404);
  });
});

describe('_rev and _revisions disagreeing: _revisions decides', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/dis', { method: 'PUT' });
  });
  after(async () => server.close());

  test('with new_edits:false the revision stored is the one _revisions names', async () => {
    const res = await server.admin('/dis/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'doc', _rev: '1-zzz', _revisions: { start: 2, ids: ['b', 'a'] }, v: 2 }] },
    });
    assert.deepEqual([res.status, res.body], [201, []]);
    const doc = await server.admin('/dis/doc?revs=true');
    assert.deepEqual(doc.body, { _id: 'doc', _rev: '2-b', v: 2, _revisions: { start: 2, ids: ['b', 'a'] } });
    assert.equal((await server.admin('/dis/doc?rev=1-zzz')).status, 404);
  });

  test('with new edits the edit builds on the revision _revisions names, whatever _rev says', async () => {
    const first = await server.admin('/dis/edit', { method: 'PUT', body: { v: 1 } });
    const res = await server.admin('/dis/edit', {
      method: 'PUT',
      body: { _rev: '1-stale', _revisions: { start: 1, ids: [first.body.rev.slice(2)] }, v: 2 },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.rev, /^2-/);
    assert.equal((await server.admin('/dis/edit')).body.v, 2);
  });

  test('a ?rev= that differs from the revision _revisions names is still 400', async () => {
    const res = await server.admin('/dis/other?rev=1-a', { method: 'PUT', body: { _revisions: { start: 1, ids: ['b'] } } });
    assert.deepEqual(res.body, { error: 'bad_request', reason: 'Document rev from request body and query string have different values' });
  });
});

describe('_replication_* members on ordinary documents', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/repl', { method: 'PUT' });
  });
  after(async () => server.close());

  test('_replication_id, _replication_state, _replication_state_time, _replication_state_reason, _replication_stats and _access are kept as members', async () => {
    const members = {
      _replication_id: 'test',
      _replication_state: 'triggered',
      _replication_state_time: 1,
      _replication_state_reason: 'why',
      _replication_stats: {},
      _access: ['bob'],
    };
    const post = await server.admin('/repl', { method: 'POST', body: { ...members, v: 1 } });
    assert.equal(post.status, 201);
    const doc = await server.admin(`/repl/${post.body.id}`);
    assert.deepEqual(doc.body, { _id: post.body.id, _rev: post.body.rev, ...members, v: 1 });
    const local = await server.admin('/repl/_local/cp', { method: 'PUT', body: { _replication_id: 'r' } });
    assert.equal(local.status, 201);
    assert.equal((await server.admin('/repl/_local/cp')).body._replication_id, 'r');
  });

  test('a _local document ignores _revisions, as it has no history: its _rev decides', async () => {
    const first = await server.admin('/repl/_local/hist', { method: 'PUT', body: { v: 1 } });
    assert.equal(first.status, 201);
    const again = await server.admin('/repl/_local/hist', { method: 'PUT', body: { _rev: first.body.rev, _revisions: { start: 0, ids: ['1'] }, v: 2 } });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    const doc = await server.admin('/repl/_local/hist');
    assert.equal(doc.body.v, 2);
    assert.equal(doc.body._revisions, undefined);
  });

  test('other special members are still refused with doc_validation', async () => {
    const res = await server.admin('/repl/x', { method: 'PUT', body: { _replication_other: 1 } });
    assert.deepEqual([res.status, res.body], [400, { error: 'doc_validation', reason: 'Bad special document member: _replication_other' }]);
  });
});
