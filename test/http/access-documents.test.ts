// Per-document access (`PUT /db?access=true`): writes must name the writer in `_access`, a document
// is read, updated and deleted only by its principals and admins, and every path this version has
// not scoped to a user's documents is refused rather than answered with other users' documents.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { ACCESS_DB, ADMINS_ONLY, as, MISSING, PASSWORDS, seedAccessDb } from '../support/access-helpers.js';
import { FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

describeOnEachBackend('per-document access: documents', (server) => {
  let aliceRev = '';
  before(async () => {
    await seedAccessDb(server());
    const put = await as(server(), 'alice', '/alice-1', { method: 'PUT', body: { _access: ['alice'], title: 'milk' } });
    assert.equal(put.status, 201, put.text);
    aliceRev = put.body.rev;
    const shared = await as(server(), 'alice', '/team-1', { method: 'PUT', body: { _access: ['team'], title: 'plan' } });
    assert.equal(shared.status, 201, shared.text);
    const att = await as(server(), 'bob', '/bob-1', { method: 'PUT', body: { _access: ['bob'], _attachments: { 'a.txt': { content_type: 'text/plain', data: 'c2VjcmV0' } } } });
    assert.equal(att.status, 201, att.text);
  });

  test('GET / lists access-ready; GET /db shows props.access to its admins, and {} elsewhere', async () => {
    assert.ok((await server().request('/')).body.features.includes('access-ready'));
    assert.deepEqual((await server().admin(`/${ACCESS_DB}`)).body.props, { access: true });
    await server().admin('/plain', { method: 'PUT' });
    assert.deepEqual((await server().admin('/plain')).body.props, {});
  });

  test('a write without _access, or one that does not name the writer, is refused; a malformed one is 400', async () => {
    const none = await as(server(), 'bob', '/x1', { method: 'PUT', body: { title: 'x' } });
    assert.deepEqual([none.status, none.body.error], [403, 'forbidden']);
    const other = await as(server(), 'bob', '/x2', { method: 'PUT', body: { _access: ['alice'] } });
    assert.deepEqual([other.status, other.body.error], [403, 'forbidden']);
    const bad = await as(server(), 'bob', '/x3', { method: 'PUT', body: { _access: 'bob' } });
    assert.deepEqual([bad.status, bad.body.error], [400, 'bad_request']);
    assert.equal((await server().admin(`/${ACCESS_DB}/x2`)).status, 404);
  });

  test('the owner reads their document; a role in _access admits every user with that role', async () => {
    const own = await as(server(), 'alice', '/alice-1');
    assert.deepEqual([own.status, own.body._access], [200, ['alice']]);
    assert.equal((await as(server(), 'carol', '/team-1')).status, 200);
    assert.equal((await server().admin(`/${ACCESS_DB}/alice-1`)).status, 200);
  });

  test('another user, and a member with no document, get the 404 of an absent document on every read form', async () => {
    for (const user of ['bob', 'dave']) {
      for (const query of ['', '?revs=true', '?conflicts=true&revs_info=true', `?rev=${aliceRev}`, '?attachments=true', '?meta=true']) {
        const res = await as(server(), user, `/alice-1${query}`);
        assert.deepEqual([res.status, res.body], [404, MISSING], `${user} ${query}`);
      }
      assert.deepEqual((await as(server(), user, '/team-1')).body, MISSING);
    }
    const attachment = await as(server(), 'alice', '/bob-1/a.txt');
    assert.deepEqual([attachment.status, attachment.body], [404, MISSING]);
    assert.equal((await as(server(), 'bob', '/bob-1/a.txt')).text, 'secret');
    const absent = await as(server(), 'bob', '/no-such-doc');
    assert.deepEqual([absent.status, absent.body], [404, MISSING]);
  });

  test('a user who is no member, and anonymous, are refused at the database', async () => {
    const eve = await as(server(), 'eve', '/alice-1');
    assert.equal(eve.status, 403);
    const anonymous = await server().request(`/${ACCESS_DB}/alice-1`);
    assert.equal(anonymous.status, 401);
  });

  test('another user cannot update, delete or copy over a document: 404 as if absent', async () => {
    const update = await as(server(), 'bob', '/alice-1', { method: 'PUT', body: { _rev: aliceRev, _access: ['bob'], title: 'mine' } });
    assert.deepEqual([update.status, update.body], [404, MISSING]);
    const remove = await as(server(), 'bob', `/alice-1?rev=${aliceRev}`, { method: 'DELETE' });
    assert.equal(remove.status, 404);
    const copy = await as(server(), 'bob', '/alice-1', { method: 'COPY', headers: { Destination: 'bob-copy' } });
    assert.equal(copy.status, 404);
    assert.deepEqual((await server().admin(`/${ACCESS_DB}/alice-1`)).body.title, 'milk');
  });

  test('a principal cannot be dropped from _access; one can be added; deletion keeps the tombstone\'s _access', async () => {
    const created = await as(server(), 'alice', '/share-1', { method: 'PUT', body: { _access: ['alice', 'bob'] } });
    const drop = await as(server(), 'alice', '/share-1', { method: 'PUT', body: { _rev: created.body.rev, _access: ['alice'] } });
    assert.deepEqual([drop.status, drop.body.error], [403, 'forbidden']);
    const add = await as(server(), 'bob', '/share-1', { method: 'PUT', body: { _rev: created.body.rev, _access: ['alice', 'bob', 'carol'] } });
    assert.equal(add.status, 201, add.text);
    assert.equal((await as(server(), 'carol', '/share-1')).status, 200);
    const removed = await as(server(), 'carol', `/share-1?rev=${add.body.rev}`, { method: 'DELETE' });
    assert.equal(removed.status, 200, removed.text);
    const tombstone = await server().admin(`/${ACCESS_DB}/share-1?rev=${removed.body.rev}`);
    assert.deepEqual(tombstone.body._access, ['alice', 'bob', 'carol']);
    assert.deepEqual((await as(server(), 'dave', `/share-1?rev=${removed.body.rev}`)).body, MISSING);
  });

  test('design documents: admins write them, members read them', async () => {
    const refused = await as(server(), 'alice', '/_design/app', { method: 'PUT', body: { views: {} } });
    assert.deepEqual([refused.status, refused.body.error], [401, 'unauthorized']);
    assert.equal((await server().admin(`/${ACCESS_DB}/_design/app`, { method: 'PUT', body: { views: {} } })).status, 201);
    assert.equal((await as(server(), 'bob', '/_design/app')).status, 200);
  });

  test('paths not scoped to a user\'s documents are for admins: views, show functions, purges, index listings', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', '/_index'],
      ['GET', '/_design/app/_show/none/alice-1'],
      ['GET', '/_design/app/_view/none'],
      ['POST', '/_design/app/_view/none', { keys: ['alice-1'] }],
      ['POST', '/_design/app/_view/none/queries', { queries: [{}] }],
      ['GET', '/_design/app/_list/none/none'],
      ['POST', '/_design/app/_update/none/alice-1', {}],
      ['GET', '/_purged_infos'],
    ];
    for (const [method, path, body] of paths) {
      const res = await as(server(), 'bob', path, { method, ...(body === undefined ? {} : { body }), headers: { Accept: 'application/json' } });
      assert.deepEqual([res.status, res.body], [403, ADMINS_ONLY], `${method} ${path}`);
      // A member with no document of their own gets the same answer.
      const dave = await as(server(), 'dave', path, { method, ...(body === undefined ? {} : { body }), headers: { Accept: 'application/json' } });
      assert.deepEqual([dave.status, dave.body], [403, ADMINS_ONLY], `dave ${method} ${path}`);
    }
    const all = await server().admin(`/${ACCESS_DB}/_all_docs`);
    assert.ok(all.body.rows.some((row: { id: string }) => row.id === 'alice-1'));
  });

  test('replacing _security cannot switch per-document access off', async () => {
    const replaced = await server().admin(`/${ACCESS_DB}/_security`, { method: 'PUT', body: { members: { roles: ['todo'] }, divan_access: false } });
    assert.equal(replaced.status, 200);
    assert.deepEqual((await server().admin(`/${ACCESS_DB}`)).body.props, { access: true });
    assert.deepEqual((await as(server(), 'bob', '/_purged_infos')).body, ADMINS_ONLY);
    assert.deepEqual((await as(server(), 'bob', '/alice-1')).body, MISSING);
  });

  test('a database created without ?access=true keeps CouchDB\'s behaviour: _access is an ordinary member', async () => {
    await server().admin('/open', { method: 'PUT' });
    await server().admin('/open/_security', { method: 'PUT', body: { members: { roles: ['todo'] } } });
    assert.equal((await server().admin('/open/d', { method: 'PUT', body: { _access: ['alice'] } })).status, 201);
    const read = await server().request('/open/d', { auth: ['bob', PASSWORDS['bob']!] });
    assert.deepEqual([read.status, read.body._access], [200, ['alice']]);
  });
}, FAST_INI + NO_LOCKOUT_INI);
