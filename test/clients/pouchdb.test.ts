// Real client: PouchDB 9 (pouchdb-core 9.0.0 + pouchdb-adapter-http 9.0.0) with auth:{username,password} — Basic on every request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PouchDB from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import { createDatabase, createUser, startClientServer, type ClientServer } from '../support/clients.js';

PouchDB.plugin(httpAdapter);

const DB = 'pouch-members';

interface Note {
  kind: string;
  n: number;
}

/** What PouchDB rejects with: a status and a CouchDB error name. */
interface PouchError {
  status?: number;
  name?: string;
  message?: string;
  reason?: string;
}

async function rejection(promise: Promise<unknown>): Promise<PouchError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    return error as PouchError;
  }
  assert.fail(`expected the call to be rejected, it resolved with ${JSON.stringify(value)}`);
}

describe('PouchDB 9 (http adapter, Basic auth) against the real binary', () => {
  let server: ClientServer;
  const open = (username: string, password: string) =>
    new PouchDB<Note>(`${server.url}/${DB}`, { auth: { username, password }, skip_setup: true });

  before(async () => {
    server = await startClientServer();
    await createUser(server.url, 'alice', 'alice-pass');
    await createUser(server.url, 'bob', 'bob-pass');
    await createUser(server.url, 'mallory', 'mallory-pass');
    await createDatabase(server.url, DB, ['alice', 'mallory']);
  });

  after(async () => {
    await server?.close();
  });

  test('put, get, update with _rev, conflict on a stale rev', async () => {
    const db = open('alice', 'alice-pass');
    const created = await db.put({ _id: 'note-1', kind: 'note', n: 1 });
    assert.equal(created.ok, true);
    assert.equal(created.id, 'note-1');
    assert.match(created.rev, /^1-[0-9a-f]{32}$/);

    const fetched = await db.get('note-1');
    assert.deepEqual(fetched, { _id: 'note-1', _rev: created.rev, kind: 'note', n: 1 });

    const updated = await db.put({ ...fetched, n: 2 });
    assert.match(updated.rev, /^2-[0-9a-f]{32}$/);
    assert.equal((await db.get('note-1')).n, 2);

    const conflict = await rejection(db.put({ _id: 'note-1', _rev: created.rev, kind: 'note', n: 3 }));
    assert.equal(conflict.status, 409, JSON.stringify(conflict));
    assert.equal(conflict.name, 'conflict');
  });

  test('bulkDocs reports per-document results, including a conflict', async () => {
    const db = open('alice', 'alice-pass');
    const current = await db.get('note-1');
    const results = await db.bulkDocs([
      { _id: 'bulk-a', kind: 'bulk', n: 10 },
      { _id: 'bulk-b', kind: 'bulk', n: 11 },
      { _id: 'note-1', _rev: '1-00000000000000000000000000000000', kind: 'note', n: 99 },
    ]);
    assert.equal(results.length, 3);
    const [a, b, stale] = results as Array<PouchError & { ok?: boolean; id?: string; rev?: string }>;
    assert.equal(a!.ok, true);
    assert.equal(a!.id, 'bulk-a');
    assert.match(a!.rev!, /^1-/);
    assert.equal(b!.ok, true);
    assert.equal(b!.id, 'bulk-b');
    assert.equal(stale!.status, 409, JSON.stringify(stale));
    assert.equal(stale!.name, 'conflict');

    const [fresh] = (await db.bulkDocs([{ ...current, n: 4 }])) as Array<{ ok?: boolean; rev?: string }>;
    assert.equal(fresh!.ok, true);
    assert.match(fresh!.rev!, /^3-/);
  });

  test('allDocs lists the documents in id order, with include_docs', async () => {
    const db = open('alice', 'alice-pass');
    const all = await db.allDocs({ include_docs: true });
    assert.equal(all.total_rows, 3);
    assert.deepEqual(
      all.rows.map((row) => row.id),
      ['bulk-a', 'bulk-b', 'note-1'],
    );
    assert.equal(all.rows[2]!.doc!.n, 4);
    const some = await db.allDocs({ keys: ['note-1', 'missing'] });
    assert.equal(some.rows[0]!.id, 'note-1');
    assert.equal((some.rows[1] as { error?: string }).error, 'not_found');
  });

  test('remove deletes with the current rev', async () => {
    const db = open('alice', 'alice-pass');
    const doc = await db.get('bulk-b');
    const removed = await db.remove(doc);
    assert.equal(removed.ok, true);
    const gone = await rejection(db.get('bulk-b'));
    assert.equal(gone.status, 404);
    assert.equal(gone.name, 'not_found');
  });

  test('info() describes the database', async () => {
    const info = await open('alice', 'alice-pass').info();
    assert.equal(info.db_name, DB);
    assert.equal(info.doc_count, 2);
    assert.equal((info as { error?: string }).error, undefined, JSON.stringify(info));
  });

  test('another member works on the same data', async () => {
    const db = open('mallory', 'mallory-pass');
    assert.equal((await db.get('note-1')).n, 4);
  });

  test('a user who is not a member gets 403 forbidden', async () => {
    const db = open('bob', 'bob-pass');
    const error = await rejection(db.get('note-1'));
    assert.equal(error.status, 403, JSON.stringify(error));
    assert.equal(error.name, 'forbidden');
    const write = await rejection(db.put({ _id: 'intruder', kind: 'x', n: 0 }));
    assert.equal(write.status, 403, JSON.stringify(write));
    assert.equal(write.name, 'forbidden');
  });

  test('a wrong password gets 401 unauthorized', async () => {
    const db = open('alice', 'wrong-pass');
    const error = await rejection(db.get('note-1'));
    assert.equal(error.status, 401, JSON.stringify(error));
    assert.equal(error.name, 'unauthorized');
  });

  test('without skip_setup an existing database is used as is (GET /db/ answers 200)', async () => {
    const db = new PouchDB<Note>(`${server.url}/${DB}`, { auth: { username: 'alice', password: 'alice-pass' } });
    assert.equal((await db.get('note-1')).n, 4);
  });
});
