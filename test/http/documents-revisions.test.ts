/**
 * Older revisions over HTTP (issue 23): `?rev=` of a superseded revision reads its body until the
 * database is compacted, `?revs_info=true`, `?latest=true`, and `POST /{db}/_compact`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

/** Waits until `GET /{db}` says the compaction is over (it always ends: bounded by the test timeout). */
async function compacted(server: TestServer, db: string): Promise<Record<string, any>> {
  for (;;) {
    const info = await server.admin(`/${db}`);
    if (info.body.compact_running === false) return info.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('older revisions and compaction', () => {
  let server: TestServer;
  let revs: string[];
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    await server.admin('/revs', { method: 'PUT' });
    revs = [];
    for (const version of ['first', 'second', 'third']) {
      const res = await server.admin('/revs/doc', { method: 'PUT', body: { version, ...(revs.length ? { _rev: revs.at(-1) } : {}) } });
      revs.push(res.body.rev);
    }
  });
  after(async () => server.close());

  test('GET ?rev= of a superseded revision answers its body, ETag and all', async () => {
    const res = await server.admin(`/revs/doc?rev=${revs[0]}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { _id: 'doc', _rev: revs[0], version: 'first' });
    assert.equal(res.headers['etag'], `"${revs[0]}"`);
  });

  test('GET ?rev= of the revision a delete superseded reads it (not deleted)', async () => {
    const created = await server.admin('/revs/gone', { method: 'PUT', body: { v: 1 } });
    await server.admin(`/revs/gone?rev=${created.body.rev}`, { method: 'DELETE' });
    const res = await server.admin(`/revs/gone?rev=${created.body.rev}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.v, 1);
  });

  test('?revs_info=true lists the path, newest first, with each status', async () => {
    const res = await server.admin('/revs/doc?revs_info=true');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body._revs_info, [...revs].reverse().map((rev) => ({ rev, status: 'available' })));
    const meta = await server.admin('/revs/doc?meta=true');
    assert.equal(meta.body._revs_info.length, 3, 'meta includes revs_info, as CouchDB');
    assert.equal((await server.admin('/revs/doc')).body._revs_info, undefined);
  });

  test('?revs_info=true marks a replicated ancestor without a body missing and a superseded tombstone deleted', async () => {
    const path = { start: 3, ids: ['c'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)] };
    await server.admin('/revs/replicated?new_edits=false', { method: 'PUT', body: { _rev: `3-${'c'.repeat(32)}`, _revisions: path } });
    const res = await server.admin('/revs/replicated?revs_info=true');
    assert.deepEqual(res.body._revs_info.map((info: { status: string }) => info.status), ['available', 'missing', 'missing']);
    const created = await server.admin('/revs/back', { method: 'PUT', body: {} });
    const removed = await server.admin(`/revs/back?rev=${created.body.rev}`, { method: 'DELETE' });
    await server.admin('/revs/back', { method: 'PUT', body: { again: true } });
    const back = await server.admin('/revs/back?revs_info=true');
    assert.deepEqual(back.body._revs_info[1], { rev: removed.body.rev, status: 'deleted' });
  });

  test('?latest=true with an old rev answers the leaf it leads to; with a leaf, the leaf', async () => {
    const res = await server.admin(`/revs/doc?rev=${revs[0]}&latest=true`);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body._rev, res.body.version], [revs[2], 'third']);
    assert.equal((await server.admin(`/revs/doc?rev=${revs[2]}&latest=true`)).body._rev, revs[2]);
    const unknown = await server.admin(`/revs/doc?rev=9-${'f'.repeat(32)}&latest=true`);
    assert.deepEqual([unknown.status, unknown.body], [404, { error: 'not_found', reason: 'missing' }]);
  });

  test('?latest=true follows to a deleted leaf and shows it', async () => {
    const created = await server.admin('/revs/ended', { method: 'PUT', body: { v: 1 } });
    await server.admin('/revs/ended', { method: 'PUT', body: { _rev: created.body.rev, _deleted: true, v: 2 } });
    const res = await server.admin(`/revs/ended?rev=${created.body.rev}&latest=true`);
    assert.equal(res.status, 200);
    assert.deepEqual([res.body._deleted, res.body.v], [true, 2]);
  });

  test('open_revs of a superseded revision opens it; with latest=true, its leaf', async () => {
    const res = await server.admin(`/revs/doc?open_revs=${encodeURIComponent(JSON.stringify([revs[1]]))}`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.map((item: { ok: { version: string } }) => item.ok.version), ['second']);
    const latest = await server.admin(`/revs/doc?open_revs=${encodeURIComponent(JSON.stringify([revs[1]]))}&latest=true`, {
      headers: { Accept: 'application/json' },
    });
    assert.deepEqual(latest.body.map((item: { ok: { _rev: string } }) => item.ok._rev), [revs[2]]);
  });

  test('POST /{db}/_compact by a non-admin member is 401, by a db admin 202 {"ok":true}', async () => {
    await server.admin('/shared', { method: 'PUT' });
    await createUser(server, 'owner', 'owner-pass');
    await createUser(server, 'reader', 'reader-pass');
    const security = { admins: { names: ['owner'], roles: [] }, members: { names: ['reader'], roles: [] } };
    await server.admin('/shared/_security', { method: 'PUT', body: security });
    const member = await server.request('/shared/_compact', { method: 'POST', auth: ['reader', 'reader-pass'], body: {} });
    assert.deepEqual([member.status, member.body], [401, { error: 'unauthorized', reason: 'You are not a db or server admin.' }], 'as CouchDB');
    const anonymous = await server.request('/shared/_compact', { method: 'POST', body: {} });
    assert.equal(anonymous.status, 401);
    const owner = await server.request('/shared/_compact', { method: 'POST', auth: ['owner', 'owner-pass'], body: {} });
    assert.deepEqual([owner.status, owner.body], [202, { ok: true }]);
    assert.match(owner.headers['content-type'] ?? '', /^application\/json/);
    await compacted(server, 'shared');
  });

  test('POST /{db}/_compact: 404 for a missing database, 415 for a form body, 405 for GET', async () => {
    const missing = await server.admin('/nosuchdb/_compact', { method: 'POST', body: {} });
    assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
    const form = await server.admin('/revs/_compact', { method: 'POST', body: 'a=b', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    const get = await server.admin('/revs/_compact');
    assert.equal(get.status, 405);
  });

  test('compaction reclaims superseded bodies: ?rev= of them is 404 after, the leaf stays, sizes.file shrinks', async () => {
    await server.admin('/squeeze', { method: 'PUT' });
    let rev: string | undefined;
    const all: string[] = [];
    for (let v = 0; v < 20; v++) {
      const res = await server.admin('/squeeze/doc', { method: 'PUT', body: { v, padding: 'x'.repeat(1000), ...(rev ? { _rev: rev } : {}) } });
      rev = res.body.rev as string;
      all.push(rev);
    }
    const before = (await server.admin('/squeeze')).body;
    assert.ok(before.sizes.file > before.sizes.active + 19_000, JSON.stringify(before.sizes));
    const started = await server.admin('/squeeze/_compact', { method: 'POST', body: {} });
    assert.equal(started.status, 202);
    const info = await compacted(server, 'squeeze');
    assert.equal(info.sizes.file, before.sizes.active, 'only the leaf is left');
    assert.equal(info.sizes.active, before.sizes.active);
    assert.equal((await server.admin(`/squeeze/doc?rev=${all[0]}`)).status, 404);
    assert.equal((await server.admin(`/squeeze/doc?rev=${all[19]}`)).body.v, 19);
    const revsInfo = (await server.admin('/squeeze/doc?revs_info=true')).body._revs_info;
    assert.deepEqual([revsInfo[0].status, revsInfo[1].status, revsInfo.length], ['available', 'missing', 20]);
  });
});
