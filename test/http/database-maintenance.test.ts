import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

describeOnEachBackend('maintenance endpoints: _revs_limit, _purge, _purged_infos_limit, _dbs_info', (server) => {
  before(async () => {
    await server().admin('/_users/org.couchdb.user:member', { method: 'PUT', body: { name: 'member', password: 'member-pass', roles: [], type: 'user' } });
    for (const db of ['maint', 'other']) {
      await server().admin(`/${db}`, { method: 'PUT' });
      await server().admin(`/${db}/_security`, { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['member'], roles: [] } } });
    }
  });
  const member: [string, string] = ['member', 'member-pass'];

  test('GET /{db}/_revs_limit is 1000; a db admin PUTs a new one, which stems documents when written', async () => {
    assert.deepEqual([(await server().admin('/maint/_revs_limit')).text], ['1000\n']);
    assert.equal((await server().request('/maint/_revs_limit', { auth: member })).body, 1000, 'members read it');
    assert.equal((await server().request('/maint/_revs_limit', { method: 'PUT', auth: member, body: '3', headers: { 'Content-Type': 'application/json' } })).status, 401);
    const set = await server().admin('/maint/_revs_limit', { method: 'PUT', body: '3', headers: { 'Content-Type': 'application/json' } });
    assert.deepEqual([set.status, set.body], [200, { ok: true }]);
    assert.equal((await server().admin('/maint/_revs_limit')).body, 3);
    let rev: string | undefined;
    for (let v = 0; v < 6; v++) rev = (await server().admin('/maint/stemmed', { method: 'PUT', body: rev ? { v, _rev: rev } : { v } })).body.rev;
    const doc = await server().admin('/maint/stemmed?revs=true&revs_info=true');
    assert.equal(doc.body._revisions.ids.length, 3);
    assert.equal(doc.body._revisions.start, 6);
    assert.equal(doc.body._revs_info.length, 3);
  });

  test('_revs_limit refuses what is not a positive integer, and other methods', async () => {
    for (const body of ['0', '-1', '"10"', '1.5', '{}']) {
      const res = await server().admin('/maint/_revs_limit', { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } });
      assert.deepEqual([res.status, res.body.error], [400, 'bad_request'], body);
    }
    assert.equal((await server().admin('/maint/_revs_limit', { method: 'POST', body: {} })).status, 405);
    assert.equal((await server().admin('/nodb/_revs_limit')).status, 404);
  });

  test('POST /{db}/_purge removes a document for good: 201 with purged revisions, purge_seq in GET /{db}', async () => {
    const first = (await server().admin('/maint/gone', { method: 'PUT', body: { secret: 1 } })).body.rev;
    const second = (await server().admin('/maint/gone', { method: 'PUT', body: { secret: 2, _rev: first } })).body.rev;
    const before = (await server().admin('/maint')).body;
    const res = await server().admin('/maint/_purge', { method: 'POST', body: { gone: [second, first], nothing: ['1-abc'] } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { purge_seq: null, purged: { gone: [second], nothing: [] } });
    assert.equal((await server().admin('/maint/gone')).status, 404);
    assert.equal((await server().admin(`/maint/gone?rev=${first}`)).status, 404, 'older revisions go too');
    const after = (await server().admin('/maint')).body;
    assert.equal(after.doc_count, before.doc_count - 1);
    assert.match(after.purge_seq, /^1-/);
    assert.notEqual(after.update_seq, before.update_seq);
    const changes = await server().admin('/maint/_changes');
    assert.ok(!changes.body.results.some((row: { id: string }) => row.id === 'gone'), 'the purged document leaves the feed');
    const infos = await server().request('/maint/_purged_infos', { auth: member });
    assert.deepEqual(infos.body, { purged_infos: [{ id: 'gone', revs: [second] }] });
    assert.equal((await server().admin('/maint/_purged_infos', { method: 'POST', body: {} })).status, 405);
  });

  test('purging one branch of a conflict leaves the other as the winner, listed again in _changes', async () => {
    const root = (await server().admin('/maint/split', { method: 'PUT', body: { v: 0 } })).body.rev;
    const mine = (await server().admin('/maint/split', { method: 'PUT', body: { v: 'mine', _rev: root } })).body.rev;
    const theirs = `2-${'e'.repeat(32)}`;
    await server().admin('/maint/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [{ _id: 'split', _rev: theirs, _revisions: { start: 2, ids: ['e'.repeat(32), root.slice(2)] }, v: 'theirs' }] } });
    const winner = (await server().admin('/maint/split?conflicts=true')).body;
    const loser = winner._rev === mine ? theirs : mine;
    const since = (await server().admin('/maint')).body.update_seq;
    const res = await server().admin('/maint/_purge', { method: 'POST', body: { split: [winner._rev] } });
    assert.deepEqual(res.body.purged, { split: [winner._rev] });
    const doc = (await server().admin('/maint/split?conflicts=true')).body;
    assert.equal(doc._rev, loser);
    assert.equal(doc._conflicts, undefined);
    const changes = await server().admin(`/maint/_changes?since=${encodeURIComponent(since)}`);
    assert.deepEqual(changes.body.results.map((row: { id: string; changes: { rev: string }[] }) => [row.id, row.changes[0]!.rev]), [['split', loser]]);
  });

  test('_purge is for server admins, POST only, with a JSON object of revision lists within [purge] limits', async () => {
    assert.equal((await server().request('/maint/_purge', { method: 'POST', auth: member, body: { a: ['1-a'] } })).status, 401);
    assert.equal((await server().admin('/maint/_purge')).status, 405);
    assert.deepEqual((await server().admin('/maint/_purge', { method: 'POST', body: { a: '1-a' } })).status, 400);
    assert.deepEqual((await server().admin('/maint/_purge', { method: 'POST', body: { a: ['nonsense'] } })).body, { error: 'bad_request', reason: 'Invalid rev format' });
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`d${i}`, ['1-a']]));
    assert.deepEqual((await server().admin('/maint/_purge', { method: 'POST', body: many })).body, { error: 'bad_request', reason: 'Exceeded maximum number of documents.' });
    assert.equal((await server().admin('/nodb/_purge', { method: 'POST', body: {} })).status, 404);
  });

  test('_purged_infos_limit: members read it, server admins set a positive integer', async () => {
    assert.equal((await server().request('/maint/_purged_infos_limit', { auth: member })).body, 1000);
    assert.equal((await server().request('/maint/_purged_infos_limit', { method: 'PUT', auth: member, body: '5', headers: { 'Content-Type': 'application/json' } })).status, 401);
    assert.deepEqual((await server().admin('/maint/_purged_infos_limit', { method: 'PUT', body: '0', headers: { 'Content-Type': 'application/json' } })).body, { error: 'bad_request', reason: '`purged_infos_limit` must be positive integer' });
    assert.deepEqual((await server().admin('/maint/_purged_infos_limit', { method: 'PUT', body: '5', headers: { 'Content-Type': 'application/json' } })).body, { ok: true });
    assert.equal((await server().admin('/maint/_purged_infos_limit')).body, 5);
  });

  test('GET /_dbs_info lists each database with its info; POST with keys answers each, unknown ones not_found', async () => {
    const listed = await server().admin('/_dbs_info?startkey="maint"&limit=2');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((entry: { key: string }) => entry.key), ['maint', 'other']);
    assert.equal(listed.body[0].info.db_name, 'maint');
    assert.ok('doc_count' in listed.body[0].info && 'sizes' in listed.body[0].info && 'purge_seq' in listed.body[0].info);
    const asked = await server().admin('/_dbs_info', { method: 'POST', body: { keys: ['other', 'nodb'] } });
    assert.deepEqual(asked.body.map((entry: { key: string; error?: string }) => [entry.key, entry.error]), [['other', undefined], ['nodb', 'not_found']]);
    assert.equal((await server().admin('/_dbs_info', { method: 'POST', body: {} })).body.reason, '`keys` member must exist.');
    assert.equal((await server().request('/_dbs_info', { auth: member })).status, 401, 'as _all_dbs: [chttpd] admin_only_all_dbs');
    assert.equal((await server().admin('/_dbs_info', { method: 'PUT', body: {} })).status, 405);
  });
});
