// Security issue 32 item 9: `_find` in a secondary users database (acme/_users) must not tell a
// member what the users-database read rule hides from them (another user's `derived_key`, `salt`)
// through an index built on those fields: not by the sort order, not in the bookmark, not in
// `execution_stats`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { FAST_INI, NO_LOCKOUT_INI, seedSecondaryUsersDb, USER_PREFIX } from '../support/users-helpers.js';

const DB = 'acme%2F_users';
const MIA: [string, string] = ['mia', 'mia-pass'];
const ADA: [string, string] = ['ada', 'ada-pass'];
const NIA_ID = `${USER_PREFIX}nia`;

/** Everything a bookmark carries, as text: Divan's is base64url JSON with the key bytes in hex. */
function bookmarkText(bookmark: string): string {
  const json = Buffer.from(bookmark, 'base64url').toString('utf8');
  const parsed = JSON.parse(json) as { k?: string };
  return `${json} ${Buffer.from(parsed.k ?? '', 'hex').toString('latin1')}`;
}

describe('issue 32 item 9: _find in a users database never reveals fields its read rule hides', () => {
  let server: TestServer;
  let secret: string;

  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    await seedSecondaryUsersDb(server, DB, [MIA, ADA], ['mia', 'nia', 'ola']);
    secret = (await server.admin(`/${DB}/${encodeURIComponent(NIA_ID)}`)).body.derived_key;
    assert.equal(typeof secret, 'string');
    // The database's admin indexes the hash fields (legitimately: admins read them).
    for (const fields of [['derived_key'], ['salt', 'derived_key']]) {
      const res = await server.request(`/${DB}/_index`, { auth: ADA, method: 'POST', body: { index: { fields }, ddoc: `by-${fields.join('-')}` } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(async () => server.close());

  const findAsMia = (body: object) => server.request(`/${DB}/_find`, { auth: MIA, method: 'POST', body });

  test('issue 32 item 9: a sort by a hidden field is refused (no_usable_index), and nothing in the answer carries the hidden value', async () => {
    const res = await findAsMia({ selector: { _id: { $gt: null } }, sort: ['derived_key'], limit: 1, skip: 1 });
    assert.ok(!res.text.includes(secret), res.text);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error, 'no_usable_index');
  });

  test('issue 32 item 9: an index over a hidden field is not used for a member, so the bookmark never carries a hidden value', async () => {
    // A selector that requires the indexed fields: an admin's query would read these indexes.
    const selector = { salt: { $gt: null }, derived_key: { $gt: null } };
    for (const useIndex of ['by-derived_key', 'by-salt-derived_key']) {
      const res = await findAsMia({ selector, use_index: useIndex, limit: 10 });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.docs.map((doc: { _id: string }) => doc._id), [`${USER_PREFIX}mia`], 'the member matches their own document only');
      assert.ok(!bookmarkText(res.body.bookmark).includes(secret), `bookmark of ${useIndex} carries nia's derived_key`);
      assert.match(res.body.warning ?? '', /was not used/);
      const refused = await findAsMia({ selector, use_index: useIndex, allow_fallback: false });
      assert.equal(refused.status, 400, refused.text);
    }
  });

  test('issue 32 item 9: execution_stats of a selector on a hidden field do not depend on the hidden values', async () => {
    const stats = async (bound: string) => {
      const res = await findAsMia({ selector: { derived_key: { $gt: bound } }, execution_stats: true });
      assert.equal(res.status, 200, res.text);
      const { total_keys_examined: keys, total_docs_examined: docs } = res.body.execution_stats;
      return { keys, docs };
    };
    // Bounds on either side of nia's (hidden) key: were the index used, the keys in range would tell.
    const below = await stats(secret.slice(0, 8));
    const above = await stats(`${secret.slice(0, 8)}\uffff`);
    assert.deepEqual(below, above);
  });

  test('issue 32 item 9: an admin of the database still has the index and the sort', async () => {
    const res = await server.request(`/${DB}/_find`, { auth: ADA, method: 'POST', body: { selector: { _id: { $gt: null } }, sort: ['derived_key'] } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.docs.length, 3);
  });

  test('issue 32 item 9: a nouveau index of every field (hashes included) is never read for a member, only for an admin', async () => {
    const created = await server.request(`/${DB}/_index`, { auth: ADA, method: 'POST', body: { index: {}, type: 'nouveau', ddoc: 'everything', name: 'all' } });
    assert.equal(created.status, 200, created.text);
    // `$text` searches every string, salts and hashes included: only the index could answer it.
    const member = await findAsMia({ selector: { $text: secret } });
    assert.deepEqual([member.status, member.body.error], [400, 'no_usable_index'], member.text);
    const named = await findAsMia({ selector: { derived_key: { $gt: null } }, use_index: ['everything', 'all'], execution_stats: true });
    assert.equal(named.status, 200, named.text);
    assert.match(named.body.warning ?? '', /was not used/);
    const admin = await server.request(`/${DB}/_find`, { auth: ADA, method: 'POST', body: { selector: { $text: secret } } });
    assert.equal(admin.status, 200, admin.text);
    assert.deepEqual(admin.body.docs.map((doc: { _id: string }) => doc._id), [NIA_ID]);
  });
});
