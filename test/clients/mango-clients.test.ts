// Real clients against the real binary: nano 11 `db.find`/`db.createIndex`, and pouchdb-find 9.0.0
// (PouchDB's Mango plugin, remote database) with facts from PouchDB's own tests/find suite.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nano from 'nano';
import PouchDB from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import find from 'pouchdb-find';
import { ADMIN, createDatabase, createUser, startClientServer, type ClientServer } from '../support/clients.js';

PouchDB.plugin(httpAdapter);
PouchDB.plugin(find);

interface Hero {
  name?: string;
  rank?: number;
  series?: string;
  foo?: unknown;
}

const HEROES = [
  { _id: 'mario', name: 'Mario', rank: 5, series: 'Mario', debut: 1981 },
  { _id: 'luigi', name: 'Luigi', rank: 11, series: 'Mario', debut: 1983 },
  { _id: 'link', name: 'Link', rank: 10, series: 'Zelda', debut: 1986 },
  { _id: 'samus', name: 'Samus', rank: 12, series: 'Metroid', debut: 1986 },
  { _id: 'yoshi', name: 'Yoshi', rank: 6, series: 'Mario', debut: 1990 },
];

async function rejected(promise: Promise<unknown>): Promise<{ status?: number; name?: string; error?: string; statusCode?: number }> {
  try {
    await promise;
  } catch (error) {
    return error as { status?: number; name?: string };
  }
  assert.fail('expected a rejection');
}

describe('Mango clients against the real binary', () => {
  let server: ClientServer;
  let counter = 0;
  const freshPouch = async () => {
    const name = `pouch-find-${++counter}`;
    await createDatabase(server.url, name, ['alice']);
    return new PouchDB<Hero>(`${server.url}/${name}`, { auth: { username: ADMIN[0], password: ADMIN[1] }, skip_setup: true });
  };

  before(async () => {
    server = await startClientServer();
    await createUser(server.url, 'alice', 'alice-pass');
  });
  after(async () => server?.close());

  test('nano 11: createIndex, then find with sort, fields and the bookmark; a member may find', async () => {
    await createDatabase(server.url, 'nano-find', ['alice']);
    const admin = nano(server.url.replace('http://', `http://${ADMIN[0]}:${ADMIN[1]}@`));
    const db = admin.use<Hero>('nano-find');
    await db.bulk({ docs: HEROES });
    const index = await db.createIndex({ index: { fields: ['rank'] }, name: 'rank', ddoc: 'heroes' });
    assert.deepEqual(index, { result: 'created', id: '_design/heroes', name: 'rank' });
    const page = await db.find({ selector: { rank: { $gt: 5 } }, sort: [{ rank: 'desc' }], fields: ['_id', 'rank'], limit: 2 });
    assert.deepEqual(page.docs, [{ _id: 'samus', rank: 12 }, { _id: 'luigi', rank: 11 }]);
    assert.equal(page.warning, undefined);
    const next = await db.find({ selector: { rank: { $gt: 5 } }, sort: [{ rank: 'desc' }], fields: ['_id'], bookmark: page.bookmark });
    assert.deepEqual(next.docs.map((doc) => doc._id), ['link', 'yoshi']);
    const member = nano(server.url);
    await member.auth('alice', 'alice-pass');
    const found = await member.use<Hero>('nano-find').find({ selector: { series: 'Mario' } });
    assert.deepEqual(found.docs.map((doc) => doc._id), ['luigi', 'mario', 'yoshi']);
    assert.match(found.warning ?? '', /No matching index found/);
    const refused = await rejected(member.use('nano-find').createIndex({ index: { fields: ['series'] } }));
    assert.equal(refused.statusCode, 401);
  });

  test('pouchdb-find: createIndex says created then exists, without a new revision (test.basic.js)', async () => {
    const db = await freshPouch();
    const index = { index: { fields: ['foo'] }, name: 'foo-index', type: 'json' };
    const first = await db.createIndex(index);
    assert.deepEqual([first.result, first.name], ['created', 'foo-index']);
    assert.match(first.id, /^_design\//);
    const second = await db.createIndex(index);
    assert.deepEqual([second.result, second.id], ['exists', first.id]);
    const ddoc = await db.get(first.id);
    assert.equal(String(ddoc._rev).slice(0, 2), '1-');
    const other = await db.createIndex({ ...index, name: 'bar-index' });
    assert.notEqual(other.id, first.id, 'the same definition under two names gets two design documents');
    assert.equal((await db.getIndexes()).indexes.length, 3);
  });

  test('pouchdb-find: bad index calls are rejected; a query ddoc without views is ignored; a non-query ddoc refused (test.ddoc.js)', async () => {
    const db = await freshPouch();
    await rejected(db.createIndex('yo yo yo' as never));
    await rejected(db.deleteIndex('yo yo yo' as never));
    await db.put({ _id: '_design/missing-view', language: 'query' } as never);
    assert.equal((await db.getIndexes()).indexes.length, 1);
    await db.put({ _id: '_design/foo' } as never);
    await rejected(db.createIndex({ index: { fields: ['foo'] }, name: 'foo-index', ddoc: 'foo' }));
  });

  test('pouchdb-find: many indexes created at once all work (test.ddoc.js)', async () => {
    const db = await freshPouch();
    await db.bulkDocs(HEROES);
    const fields = [['rank'], ['series'], ['debut'], ['name'], ['name', 'rank'], ['name', 'series'], ['series', 'debut', 'rank'], ['rank', 'debut']];
    await Promise.all(fields.map((index) => db.createIndex({ index: { fields: index } })));
    assert.equal((await db.getIndexes()).indexes.length, fields.length + 1);
    const res = await db.find({ selector: { series: 'Mario', debut: { $gt: 1981 } }, fields: ['_id'] });
    assert.deepEqual(res.docs.map((doc) => doc._id).sort(), ['luigi', 'yoshi']);
  });

  test('pouchdb-find: data types order as CouchDB collates them (test.data-type-order.js)', async () => {
    const db = await freshPouch();
    await db.createIndex({ index: { fields: ['foo'] } });
    const values: [string, unknown][] = [['8', 'foo'], ['5', 0], ['3', true], ['2', false], ['6', 42], ['9', [0]], ['10', ['foo']], ['7', ''], ['4', -42], ['1', null]];
    await db.bulkDocs(values.map(([_id, foo]) => ({ _id, foo })));
    const below = await db.find({ selector: { foo: { $lt: 0 } }, sort: [{ foo: 'desc' }], fields: ['_id'] });
    assert.deepEqual(below.docs, [{ _id: '4' }, { _id: '3' }, { _id: '2' }, { _id: '1' }]);
    const above = await db.find({ selector: { foo: { $gt: 0 } }, fields: ['_id'] });
    assert.deepEqual(above.docs, [{ _id: '6' }, { _id: '7' }, { _id: '8' }, { _id: '9' }, { _id: '10' }]);
  });

  test('pouchdb-find: 0, null and false are indexed values (test.default-index.js)', async () => {
    const db = await freshPouch();
    await db.createIndex({ index: { fields: ['foo'] } });
    await db.bulkDocs([{ _id: '1', foo: 0 }, { _id: '2', foo: null }, { _id: '3', foo: false }, { _id: '4', foo: 1 }]);
    for (const [value, id] of [[0, '1'], [null, '2'], [false, '3']] as const) {
      const res = await db.find({ selector: { foo: value }, fields: ['_id'] });
      assert.deepEqual(res.docs, [{ _id: id }], JSON.stringify(value));
    }
  });

  test('pouchdb-find: no index gives the warning; a sort without index is rejected (test.default-index.js, test.errors.js)', async () => {
    const db = await freshPouch();
    await db.bulkDocs([{ _id: '1', foo: 'eyo' }, { _id: '2', foo: 'ebb' }, { _id: '3', foo: 'eba' }, { _id: '4', foo: 'abo' }]);
    const res = await db.find({ selector: { foo: { $ne: 'eba' } }, fields: ['_id'] });
    assert.match(res.warning ?? '', /no matching index found/i);
    assert.deepEqual(res.docs, [{ _id: '1' }, { _id: '2' }, { _id: '4' }]);
    const sorted = await rejected(db.find({ selector: { foo: { $ne: 'eba' } }, sort: [{ foo: 'asc' }] }));
    assert.equal(sorted.status, 400);
    const mixed = await rejected(db.find({ selector: { foo: { $gt: null } }, sort: [{ foo: 'asc' }, { _id: 'desc' }] }));
    assert.equal(mixed.status, 400);
  });

  test('pouchdb-find: use_index by ddoc and by [ddoc, name]; explain shows it (test.use-index.js)', async () => {
    const db = await freshPouch();
    await db.bulkDocs(HEROES);
    await db.createIndex({ index: { fields: ['name'] }, ddoc: 'index-2', name: 'name-2' });
    await db.createIndex({ index: { fields: ['name'] }, ddoc: 'index-3', name: 'name-3' });
    assert.equal((await db.explain({ selector: { name: 'Mario' }, use_index: 'index-2' })).index.ddoc, '_design/index-2');
    assert.equal((await db.explain({ selector: { name: 'Mario' }, use_index: ['index-3', 'name-3'] })).index.ddoc, '_design/index-3');
    const res = await db.find({ selector: { name: { $gt: 'L' } }, use_index: 'index-3', sort: ['name'], limit: 2, skip: 1, fields: ['_id'] });
    assert.deepEqual(res.docs, [{ _id: 'luigi' }, { _id: 'mario' }]);
  });

  test('pouchdb-find: deleteIndex removes it from getIndexes', async () => {
    const db = await freshPouch();
    const created = await db.createIndex({ index: { fields: ['series'] }, name: 'by-series', ddoc: 'series' });
    const listed = (await db.getIndexes()).indexes.find((index) => index.name === 'by-series')!;
    assert.deepEqual(listed.def.fields, [{ series: 'asc' }]);
    assert.deepEqual(await db.deleteIndex({ ddoc: created.id, name: 'by-series', type: 'json' }), { ok: true });
    assert.equal((await db.getIndexes()).indexes.length, 1);
  });
});
