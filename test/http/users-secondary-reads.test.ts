// Every read path applies the users-database read rule wherever a database is a users database
// (security issue item 11): a member of `acme/_users` sees other users' public fields only, through
// GET, open_revs, _bulk_get, _all_docs and _changes alike, and cannot probe hidden fields with a selector.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { createUser, deleteConfig, FAST_INI, NO_LOCKOUT_INI, seedSecondaryUsersDb, setConfig, USER_PREFIX, userBody } from '../support/users-helpers.js';

const DB = 'acme%2F_users';
const MIA: [string, string] = ['mia', 'mia-pass'];
const ADA: [string, string] = ['ada', 'ada-pass'];
const NIA_ID = `${USER_PREFIX}nia`;
const MIA_ID = `${USER_PREFIX}mia`;

describe('a secondary users database (acme/_users) read by its members', () => {
  let server: TestServer;
  /** Strings of nia's stored hash that must never reach mia. */
  let secrets: string[];

  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    await seedSecondaryUsersDb(server, DB, [MIA, ADA], ['mia', 'nia']);
    const design = await server.admin(`/${DB}/_design/app`, { method: 'PUT', body: { secret_note: 'admins only' } });
    assert.equal(design.status, 201, design.text);
    const nia = (await server.admin(`/${DB}/${encodeURIComponent(NIA_ID)}`)).body;
    assert.equal(typeof nia.derived_key, 'string', 'the write was hashed: acme/_users is a users database');
    secrets = [nia.derived_key, nia.salt, 'admins only'];
  });
  after(async () => server.close());

  const asMia = (path: string, options: Parameters<TestServer['request']>[1] = {}) => server.request(`/${DB}${path}`, { auth: MIA, ...options });
  const assertNoSecret = (text: string, what: string) => {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${what} leaked ${secret}: ${text}`);
  };

  const READ_PATHS: [string, string, Parameters<TestServer['request']>[1]?][] = [
    ['_all_docs include_docs', '/_all_docs?include_docs=true'],
    ['_all_docs key', `/_all_docs?include_docs=true&key=${encodeURIComponent(JSON.stringify(NIA_ID))}`],
    ['_all_docs keys (GET)', `/_all_docs?include_docs=true&keys=${encodeURIComponent(JSON.stringify([NIA_ID, '_design/app']))}`],
    ['POST _all_docs keys', '/_all_docs?include_docs=true', { method: 'POST', body: { keys: [NIA_ID, '_design/app'] } }],
    ['_changes include_docs', '/_changes?include_docs=true'],
    ['_changes descending', '/_changes?include_docs=true&descending=true'],
    ['_changes style=all_docs, conflicts', '/_changes?include_docs=true&style=all_docs&conflicts=true'],
    ['_changes longpoll', '/_changes?feed=longpoll&include_docs=true'],
    ['_changes continuous', '/_changes?feed=continuous&include_docs=true&timeout=50'],
    ['_changes eventsource', '/_changes?feed=eventsource&include_docs=true&timeout=50'],
    ['POST _changes doc_ids', '/_changes?filter=_doc_ids&include_docs=true', { method: 'POST', body: { doc_ids: [NIA_ID] } }],
    ['GET the document', `/${encodeURIComponent(NIA_ID)}`],
    ['open_revs=all', `/${encodeURIComponent(NIA_ID)}?open_revs=all`],
    ['_bulk_get', '/_bulk_get', { method: 'POST', body: { docs: [{ id: NIA_ID }, { id: '_design/app' }] } }],
  ];
  for (const [what, path, options] of READ_PATHS) {
    test(`${what}: no password hash of another user reaches a member`, async () => {
      const res = await asMia(path, options);
      assert.ok(res.status === 200 || res.status === 404, `${res.status} ${res.text}`);
      assertNoSecret(res.text, what);
    });
  }

  test("_all_docs include_docs: the member's own document in full, another's as its row tells it", async () => {
    const res = await asMia('/_all_docs?include_docs=true');
    const docs = Object.fromEntries(res.body.rows.map((row: { id: string; doc: Record<string, unknown> }) => [row.id, row.doc]));
    assert.equal(typeof docs[MIA_ID].derived_key, 'string', 'the owner reads their own document');
    assert.deepEqual(Object.keys(docs[NIA_ID]).sort(), ['_id', '_rev']);
    assert.deepEqual(Object.keys(docs['_design/app']).sort(), ['_id', '_rev'], 'design documents are for admins');
  });

  test('_changes include_docs shows the same as _all_docs', async () => {
    const res = await asMia('/_changes?include_docs=true');
    const nia = res.body.results.find((row: { id: string }) => row.id === NIA_ID);
    assert.deepEqual(Object.keys(nia.doc).sort(), ['_id', '_rev']);
  });

  test('a _selector filter is matched on what the member may see: hidden fields cannot be probed', async () => {
    const probe = (selector: unknown) => asMia('/_changes?filter=_selector', { method: 'POST', body: { selector } });
    const res = await probe({ derived_key: { $exists: true } });
    assert.deepEqual(res.body.results.map((row: { id: string }) => row.id), [MIA_ID], 'only the own document has a visible derived_key');
    const byPrefix = await probe({ _id: NIA_ID, salt: { $gt: '' } });
    assert.deepEqual(byPrefix.body.results, []);
  });

  test('public_fields are shown in listings too, and never totp', async () => {
    await setConfig(server, 'chttpd_auth', 'public_fields', 'team, totp');
    try {
      const res = await asMia(`/_all_docs?include_docs=true&key=${encodeURIComponent(JSON.stringify(NIA_ID))}`);
      const doc = res.body.rows[0].doc;
      assert.deepEqual([doc._id, doc.team, doc.derived_key], [NIA_ID, 'acme', undefined]);
    } finally {
      await deleteConfig(server, 'chttpd_auth', 'public_fields');
    }
  });

  test('a database admin sees every document in full', async () => {
    const res = await server.request(`/${DB}/_all_docs?include_docs=true`, { auth: ADA });
    const nia = res.body.rows.find((row: { id: string }) => row.id === NIA_ID);
    assert.equal(nia.doc.derived_key, secrets[0]);
    const changes = await server.request(`/${DB}/_changes?include_docs=true`, { auth: ADA });
    assert.ok(changes.text.includes('admins only'));
  });

  test('_users itself stays server-admin only for listings, even for a database admin', async () => {
    for (const path of ['/_users/_all_docs', '/_users/_changes']) {
      const res = await server.request(path, { auth: ADA });
      assert.equal(res.status, 401, `${path}: ${res.text}`);
    }
  });
});

describe('[couchdb] users_db_suffix', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI + '[couchdb]\nusers_db_suffix = _people\n' });
    await createUser(server, 'mia', 'mia-pass');
    assert.equal((await server.admin('/acme%2F_people', { method: 'PUT' })).status, 201);
    assert.equal((await server.admin('/acme%2F_people/_security', { method: 'PUT', body: { members: { names: ['mia'] } } })).status, 200);
  });
  after(async () => server.close());

  test('a database whose last segment is the suffix is a users database: writes are hashed, reads filtered', async () => {
    const write = await server.admin(`/acme%2F_people/${encodeURIComponent(NIA_ID)}`, { method: 'PUT', body: userBody('nia', 'nia-pw') });
    assert.equal(write.status, 201, write.text);
    const stored = (await server.admin(`/acme%2F_people/${encodeURIComponent(NIA_ID)}`)).body;
    assert.equal(stored.password, undefined, 'the password was hashed');
    const listed = await server.request('/acme%2F_people/_all_docs?include_docs=true', { auth: MIA });
    assert.ok(!listed.text.includes(stored.derived_key), listed.text);
  });

  test('a name merely ending in the suffix (acme_people) is an ordinary database', async () => {
    assert.equal((await server.admin('/acme_people', { method: 'PUT' })).status, 201);
    const write = await server.admin('/acme_people/doc', { method: 'PUT', body: { password: 'kept as written' } });
    assert.equal(write.status, 201);
    assert.equal((await server.admin('/acme_people/doc')).body.password, 'kept as written');
  });
});
