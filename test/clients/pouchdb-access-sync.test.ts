// PouchDB against one database with per-document access: three users each `db.sync()` with it and
// end with exactly the documents their `_access` admits; a pushed document they may not write is
// refused for that document only, and the rest of the push goes through.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import PouchDB, { type Database, type PouchFetchInit } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import memoryAdapter from 'pouchdb-adapter-memory';
import replication from 'pouchdb-replication';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { ACCESS_DB, PASSWORDS, seedAccessDb } from '../support/access-helpers.js';
import type { TestServer } from '../support/server.js';
import { FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

PouchDB.plugin(memoryAdapter).plugin(httpAdapter).plugin(replication);

interface Content {
  _access?: string[];
  n?: number;
}
type FetchFn = (url: string, init: PouchFetchInit) => Promise<Response>;
let localCounter = 0;

function remoteFor(server: TestServer, user: string): Database<Content> {
  const authorization = `Basic ${Buffer.from(`${user}:${PASSWORDS[user]}`).toString('base64')}`;
  const fetchFn: FetchFn = (url, init) => {
    const headers = new Headers();
    for (const [name, value] of init.headers.entries()) headers.set(name, value);
    headers.set('Authorization', authorization);
    return fetch(url, { method: init.method, body: init.body, headers, signal: init.signal });
  };
  return new PouchDB<Content>(`${server.url}/${ACCESS_DB}`, { skip_setup: true, fetch: fetchFn });
}

async function idsOf(db: Database<Content>): Promise<string[]> {
  return (await db.allDocs()).rows.map((row) => row.id).filter((id) => !id.startsWith('_design/'));
}

describeOnEachBackend('PouchDB sync with per-document access', (server) => {
  const USERS = ['alice', 'bob', 'carol'] as const;
  const locals = new Map<string, Database<Content>>();
  before(async () => {
    await seedAccessDb(server());
    for (const user of USERS) locals.set(user, new PouchDB<Content>(`access-local-${process.pid}-${localCounter++}`, { adapter: 'memory' }));
  });

  test('each user pushes their documents and pulls back exactly those their _access admits', async () => {
    await locals.get('alice')!.bulkDocs([{ _id: 'alice:1', _access: ['alice'] }, { _id: 'team:1', _access: ['team'] }]);
    await locals.get('bob')!.bulkDocs([{ _id: 'bob:1', _access: ['bob'] }, { _id: 'bob:2', _access: ['bob', 'carol'] }]);
    await locals.get('carol')!.bulkDocs([{ _id: 'carol:1', _access: ['carol'] }]);
    for (const user of USERS) await locals.get(user)!.sync(remoteFor(server(), user));
    for (const user of USERS) await locals.get(user)!.sync(remoteFor(server(), user));
    assert.deepEqual(await idsOf(locals.get('alice')!), ['alice:1', 'team:1']);
    assert.deepEqual(await idsOf(locals.get('bob')!), ['bob:1', 'bob:2']);
    assert.deepEqual(await idsOf(locals.get('carol')!), ['bob:2', 'carol:1', 'team:1']);
    const all = await server().admin(`/${ACCESS_DB}/_all_docs`);
    assert.equal(all.body.total_rows, 5);
  });

  test('updates and deletions sync both ways between the users a document names', async () => {
    const bob = locals.get('bob')!;
    const doc = await bob.get('bob:2');
    await bob.put({ ...doc, n: 2 });
    await bob.sync(remoteFor(server(), 'bob'));
    const carol = locals.get('carol')!;
    await carol.sync(remoteFor(server(), 'carol'));
    assert.equal((await carol.get('bob:2')).n, 2);
    await carol.remove(await carol.get('carol:1'));
    await carol.sync(remoteFor(server(), 'carol'));
    const gone = await server().admin(`/${ACCESS_DB}/carol:1`);
    assert.equal(gone.status, 404);
  });

  test('a pushed document the user may not write is refused alone; the rest of the push is written', async () => {
    const bob = locals.get('bob')!;
    await bob.bulkDocs([{ _id: 'bob:3', _access: ['bob'] }, { _id: 'bob:forged', _access: ['alice'] }]);
    const result = await bob.replicate.to(remoteFor(server(), 'bob'));
    assert.equal(result.doc_write_failures, 1, JSON.stringify(result));
    assert.equal((await server().admin(`/${ACCESS_DB}/bob:3`)).status, 200);
    assert.equal((await server().admin(`/${ACCESS_DB}/bob:forged`)).status, 404);
    const alice = locals.get('alice')!;
    await alice.sync(remoteFor(server(), 'alice'));
    assert.deepEqual(await idsOf(alice), ['alice:1', 'team:1']);
  });
}, FAST_INI + NO_LOCKOUT_INI);
