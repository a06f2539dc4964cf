// Per-document access: listings, changes, replication reads, `_local` and `GET /db` answer a
// non-admin with their own documents (and design documents), counted and sequenced from their rows.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { ACCESS_DB, as, seedAccessDb } from '../support/access-helpers.js';
import { FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

describeOnEachBackend('per-document access: scoped listings', (server) => {
  const revs: Record<string, string> = {};
  before(async () => {
    await seedAccessDb(server());
    const docs: [string, string, string[]][] = [['alice', 'a1', ['alice']], ['bob', 'b1', ['bob']], ['alice', 'a2', ['alice']], ['alice', 't1', ['team']], ['bob', 'b2', ['bob']]];
    for (const [user, id, access] of docs) {
      const res = await as(server(), user, `/${id}`, { method: 'PUT', body: { _access: access, n: id } });
      assert.equal(res.status, 201, res.text);
      revs[id] = res.body.rev;
    }
    assert.equal((await server().admin(`/${ACCESS_DB}/_design/app`, { method: 'PUT', body: { views: {} } })).status, 201);
    assert.equal((await server().admin(`/${ACCESS_DB}/plain`, { method: 'PUT', body: { n: 'admin only' } })).status, 201);
  });

  test('_all_docs lists the caller\'s documents and design documents, counted from them', async () => {
    const alice = await as(server(), 'alice', '/_all_docs?include_docs=true');
    assert.equal(alice.status, 200, alice.text);
    assert.deepEqual(alice.body.rows.map((row: { id: string }) => row.id), ['_design/app', 'a1', 'a2', 't1']);
    assert.equal(alice.body.total_rows, 4);
    assert.deepEqual(alice.body.rows[1].doc._access, ['alice']);
    const bob = await as(server(), 'bob', '/_all_docs?startkey="b"&limit=1');
    assert.deepEqual([bob.body.total_rows, bob.body.offset, bob.body.rows.map((row: { id: string }) => row.id)], [3, 1, ['b1']]);
    const dave = await as(server(), 'dave', '/_all_docs');
    assert.deepEqual(dave.body.rows.map((row: { id: string }) => row.id), ['_design/app']);
  });

  test('_find answers the caller\'s documents only; execution_stats examine their rows alone', async () => {
    const alice = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: { n: { $exists: true } }, fields: ['_id', 'n'], execution_stats: true } });
    assert.equal(alice.status, 200, alice.text);
    assert.deepEqual(alice.body.docs, [{ _id: 'a1', n: 'a1' }, { _id: 'a2', n: 'a2' }, { _id: 't1', n: 't1' }]);
    // Alice's rows: her three documents and the design document; bob's two are never examined.
    assert.equal(alice.body.execution_stats.total_docs_examined, 4, alice.text);
    const bob = await as(server(), 'bob', '/_find', { method: 'POST', body: { selector: { n: { $in: ['a1', 't1', 'plain', 'b2'] } }, execution_stats: true } });
    assert.deepEqual([bob.body.docs.map((doc: { _id: string }) => doc._id), bob.body.execution_stats.total_docs_examined], [['b2'], 3]);
    const dave = await as(server(), 'dave', '/_find', { method: 'POST', body: { selector: {} } });
    assert.deepEqual([dave.status, dave.body.docs, dave.body.bookmark], [200, [], 'nil']);
  });

  test('_find bookmarks page through the caller\'s rows; one naming another\'s id reveals nothing', async () => {
    const first = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: { n: { $exists: true } }, limit: 1 } });
    assert.deepEqual(first.body.docs.map((doc: { _id: string }) => doc._id), ['a1']);
    const decoded = JSON.parse(Buffer.from(first.body.bookmark, 'base64url').toString('utf8'));
    assert.equal(decoded.d, 'a1');
    const next = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: { n: { $exists: true } }, limit: 5, bookmark: first.body.bookmark } });
    assert.deepEqual(next.body.docs.map((doc: { _id: string }) => doc._id), ['a2', 't1']);
    // A forged bookmark positioned on bob's document: alice's rows after that id, nothing of bob's.
    const forged = Buffer.from(JSON.stringify({ ...decoded, d: 'b1' })).toString('base64url');
    const after = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: {}, bookmark: forged, execution_stats: true } });
    assert.deepEqual(after.body.docs.map((doc: { _id: string }) => doc._id), ['t1']);
    assert.equal(after.body.execution_stats.total_docs_examined, 1);
  });

  test('_find and _explain refuse anonymous callers and users who are no members', async () => {
    for (const path of ['/_find', '/_explain']) {
      const eve = await as(server(), 'eve', path, { method: 'POST', body: { selector: {} } });
      assert.deepEqual([eve.status, eve.body.error], [403, 'forbidden'], path);
      const anonymous = await server().request(`/${ACCESS_DB}${path}`, { method: 'POST', body: { selector: {} } });
      assert.deepEqual([anonymous.status, anonymous.body.error], [401, 'unauthorized'], path);
    }
  });

  test('_all_docs with keys answers another\'s document as not_found, like a missing one', async () => {
    const res = await as(server(), 'bob', '/_all_docs', { method: 'POST', body: { keys: ['a1', 'b1', 'nope', 'plain'] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.rows, [
      { key: 'a1', error: 'not_found' },
      { id: 'b1', key: 'b1', value: { rev: revs['b1'] } },
      { key: 'nope', error: 'not_found' },
      { key: 'plain', error: 'not_found' },
    ]);
  });

  test('_changes lists only the caller\'s rows; last_seq and pending count them alone', async () => {
    const res = await as(server(), 'carol', '/_changes?include_docs=true');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.results.map((row: { id: string }) => row.id), ['t1', '_design/app']);
    assert.equal(res.body.results[0].doc.n, 't1');
    const limited = await as(server(), 'bob', '/_changes?limit=1');
    assert.deepEqual([limited.body.results.map((row: { id: string }) => row.id), limited.body.pending], [['b1'], 2]);
    const filtered = await as(server(), 'alice', '/_changes?filter=_doc_ids&doc_ids=["a2","b1"]');
    assert.deepEqual(filtered.body.results.map((row: { id: string }) => row.id), ['a2']);
    const selected = await as(server(), 'alice', '/_changes?filter=_selector', { method: 'POST', body: { selector: { n: { $in: ['a1', 'b2'] } } } });
    assert.deepEqual(selected.body.results.map((row: { id: string }) => row.id), ['a1']);
  });

  test('a longpoll feed wakes for the caller\'s own write, not for another\'s', async () => {
    const now = await as(server(), 'alice', '/_changes?since=now');
    const since = now.body.last_seq;
    const feed = as(server(), 'alice', `/_changes?feed=longpoll&since=${since}&timeout=3000`);
    await as(server(), 'bob', '/b3', { method: 'PUT', body: { _access: ['bob'] } });
    await as(server(), 'alice', '/a3', { method: 'PUT', body: { _access: ['alice'] } });
    const res = await feed;
    assert.deepEqual(res.body.results.map((row: { id: string }) => row.id), ['a3']);
  });

  test('GET /db counts the caller\'s documents; _bulk_get and _revs_diff treat others\' as unknown', async () => {
    const info = await as(server(), 'bob', '');
    assert.equal(info.status, 200, info.text);
    assert.equal(info.body.doc_count, 4, JSON.stringify(info.body));
    const got = await as(server(), 'bob', '/_bulk_get', { method: 'POST', body: { docs: [{ id: 'a1' }, { id: 'b1' }, { id: 'a1', rev: revs['a1'] }] } });
    assert.equal(got.status, 200, got.text);
    const [a1, b1, a1rev] = got.body.results;
    assert.ok(a1.docs[0].error, JSON.stringify(a1));
    assert.equal(b1.docs[0].ok._id, 'b1');
    assert.equal(a1rev.docs[0].error.error, 'not_found');
    const diff = await as(server(), 'bob', '/_revs_diff', { method: 'POST', body: { a1: [revs['a1']], b1: [revs['b1']] } });
    assert.deepEqual(diff.body, { a1: { missing: [revs['a1']] } });
    const openRevs = await as(server(), 'bob', `/a1?open_revs=all`, { headers: { Accept: 'application/json' } });
    assert.equal(openRevs.status, 404);
  });

  test('_local documents are per user: another user\'s checkpoint of the same id is their own', async () => {
    const put = await as(server(), 'alice', '/_local/checkpoint', { method: 'PUT', body: { seq: 1 } });
    assert.equal(put.status, 201, put.text);
    assert.equal((await as(server(), 'bob', '/_local/checkpoint')).status, 404);
    assert.equal((await as(server(), 'bob', '/_local/checkpoint', { method: 'PUT', body: { seq: 9 } })).status, 201);
    const mine = await as(server(), 'alice', '/_local/checkpoint');
    assert.deepEqual([mine.body._id, mine.body.seq], ['_local/checkpoint', 1]);
  });

  test('_local_docs lists the caller\'s own _local documents under the ids they wrote', async () => {
    await as(server(), 'alice', '/_local/list-a', { method: 'PUT', body: { seq: 2 } });
    await as(server(), 'bob', '/_local/list-b', { method: 'PUT', body: { seq: 3 } });
    const alice = await as(server(), 'alice', '/_local_docs?include_docs=true');
    assert.equal(alice.status, 200, alice.text);
    assert.deepEqual(alice.body.rows.map((row: { id: string; doc: { seq: number } }) => [row.id, row.doc.seq]), [['_local/checkpoint', 1], ['_local/list-a', 2]]);
    const bob = await as(server(), 'bob', '/_local_docs', { method: 'POST', body: { keys: ['_local/checkpoint', '_local/list-a', '_local/list-b'] } });
    assert.deepEqual(bob.body.rows.map((row: { id?: string; error?: string }) => row.id ?? row.error), ['_local/checkpoint', 'not_found', '_local/list-b']);
    const ranged = await as(server(), 'bob', `/_local_docs?startkey=${encodeURIComponent('"_local/_access"')}&endkey=${encodeURIComponent('"_local/_access\ufff0"')}`);
    assert.deepEqual(ranged.body.rows, []);
    assert.deepEqual((await as(server(), 'dave', '/_local_docs')).body.rows, []);
    const eve = await as(server(), 'eve', '/_local_docs');
    assert.deepEqual([eve.status, eve.body.error], [403, 'forbidden']);
    const anonymous = await server().request(`/${ACCESS_DB}/_local_docs`);
    assert.deepEqual([anonymous.status, anonymous.body.error], [401, 'unauthorized']);
    // Admins list every stored `_local` document, each user's under its stored id.
    const admin = await server().admin(`/${ACCESS_DB}/_local_docs`);
    assert.ok(admin.body.rows.some((row: { id: string }) => row.id === '_local/_access:alice/list-a'), admin.text);
  });

  test('_bulk_docs checks each document by the write rules: one refused row, the others written', async () => {
    const res = await as(server(), 'bob', '/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'bulk-b', _access: ['bob'] }, { _id: 'bulk-x', _access: ['alice'] }, { _id: 'a1', _rev: revs['a1'], _access: ['bob'] }] } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body[0].ok, true);
    assert.equal(res.body[1].error, 'forbidden');
    assert.equal(res.body[2].error, 'not_found');
  });
  test('_find as a user never reads a json index: the same answers, and a sort it alone could serve is refused', async () => {
    const index = await server().admin(`/${ACCESS_DB}/_index`, { method: 'POST', body: { index: { fields: ['n'] }, ddoc: 'by-n', name: 'n' } });
    assert.equal(index.status, 200, index.text);
    const admin = await server().admin(`/${ACCESS_DB}/_find`, { method: 'POST', body: { selector: { n: { $gt: null } }, execution_stats: true } });
    assert.ok(admin.body.docs.some((doc: { _id: string }) => doc._id === 'plain'), admin.text);
    const bob = await as(server(), 'bob', '/_find', { method: 'POST', body: { selector: { n: { $gt: null } }, use_index: ['by-n', 'n'], execution_stats: true } });
    assert.equal(bob.status, 200, bob.text);
    assert.deepEqual(bob.body.docs.map((doc: { _id: string }) => doc._id), ['b1', 'b2']);
    // Bob's rows of `_all_docs` (his documents and the design documents), not the index's rows.
    const own = await as(server(), 'bob', '/_all_docs?limit=0');
    assert.equal(bob.body.execution_stats.total_keys_examined, own.body.total_rows);
    const sorted = await as(server(), 'bob', '/_find', { method: 'POST', body: { selector: { n: { $gt: null } }, sort: ['n'] } });
    assert.deepEqual([sorted.status, sorted.body.error], [400, 'no_usable_index']);
    const explained = await as(server(), 'bob', '/_explain', { method: 'POST', body: { selector: { n: { $gt: null } } } });
    assert.equal(explained.status, 200, explained.text);
    assert.equal(explained.body.index.name, '_all_docs');
    assert.deepEqual(explained.body.index_candidates, []);
  });

  test('a user\'s _find never reads a nouveau index (it holds every user\'s documents); the admin\'s does', async () => {
    const created = await server().admin(`/${ACCESS_DB}/_index`, { method: 'POST', body: { index: { fields: [{ name: 'n', type: 'string' }] }, type: 'nouveau', ddoc: 'text', name: 'n' } });
    assert.equal(created.status, 200, created.text);
    const alice = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: { n: 'b1' } } });
    assert.equal(alice.status, 200, alice.text);
    assert.deepEqual(alice.body.docs, []);
    assert.match(alice.body.warning, /No matching index found/);
    const text = await as(server(), 'alice', '/_find', { method: 'POST', body: { selector: { $text: 'b1' } } });
    assert.deepEqual([text.status, text.body.error], [400, 'no_usable_index']);
    const admin = await server().admin(`/${ACCESS_DB}/_find`, { method: 'POST', body: { selector: { $text: 'b1' } } });
    assert.equal(admin.status, 200, admin.text);
    assert.deepEqual(admin.body.docs.map((doc: { _id: string }) => doc._id), ['b1']);
  });
}, FAST_INI + NO_LOCKOUT_INI);
