// The owner rule of `_users` updates a user's own document and never creates one (security issue
// item 9): a name known only from a JWT or a proxy must not give itself a lasting password.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer as signedBearer, externalAuthIni } from '../support/external-auth.js';
import { startServer, type TestServer } from '../support/server.js';
import {
  answerOf,
  createUser,
  FAST_INI,
  MISSING,
  NO_LOCKOUT_INI,
  NOT_ALLOWED_FOR_DB,
  openSignup,
  postSession,
  readUser,
  userBody,
  userPath,
} from '../support/users-helpers.js';

const SECRET = Buffer.from('owner-create-test-hmac-secret-0123456789');
const bearer = (sub: string) => signedBearer(SECRET, sub);
const proxied = (name: string) => ({ 'X-Auth-CouchDB-UserName': name });

describe('_users owner rule: updates only', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ini: FAST_INI + NO_LOCKOUT_INI + externalAuthIni(SECRET),
    });
  });
  after(async () => server.close());

  test('a JWT-only user cannot create their own user document (PUT) → 403, and no password works afterwards', async () => {
    const res = await server.request(userPath('erin'), { method: 'PUT', headers: await bearer('erin'), body: userBody('erin', 'lasting-pw') });
    assert.deepEqual(answerOf(res), { status: 403, body: NOT_ALLOWED_FOR_DB });
    assert.equal(await readUser(server, 'erin'), undefined);
    assert.equal((await postSession(server, 'erin', 'lasting-pw')).status, 401);
  });

  test('nor through POST /_users, nor as a proxy user', async () => {
    const post = await server.request('/_users', { method: 'POST', headers: await bearer('erin'), body: userBody('erin', 'lasting-pw') });
    assert.deepEqual(answerOf(post), { status: 403, body: NOT_ALLOWED_FOR_DB });
    const proxy = await server.request(userPath('pia'), { method: 'PUT', headers: proxied('pia'), body: userBody('pia', 'lasting-pw') });
    assert.deepEqual(answerOf(proxy), { status: 403, body: NOT_ALLOWED_FOR_DB });
    assert.equal(await readUser(server, 'pia'), undefined);
  });

  test('the owner may still update an existing document (a password change), through a JWT too', async () => {
    await createUser(server, 'gwen', 'old-pw');
    const doc = await readUser(server, 'gwen');
    const res = await server.request(userPath('gwen'), { method: 'PUT', headers: await bearer('gwen'), body: { ...doc, password: 'new-pw' } });
    assert.equal(res.status, 201, res.text);
    assert.equal((await postSession(server, 'gwen', 'new-pw')).status, 200);
  });

  test('a deleted document is not recreated by its owner: that is creation again', async () => {
    await createUser(server, 'hank', 'hank-pw');
    const doc = await readUser(server, 'hank');
    const removed = await server.request(userPath('hank', `?rev=${doc!._rev}`), { method: 'DELETE', auth: ['hank', 'hank-pw'] });
    assert.equal(removed.status, 200, removed.text);
    const again = await server.request(userPath('hank'), { method: 'PUT', headers: await bearer('hank'), body: userBody('hank', 'back-pw') });
    assert.deepEqual(answerOf(again), { status: 403, body: NOT_ALLOWED_FOR_DB });
  });

  test('reading a document that does not exist stays 404 for its would-be owner', async () => {
    const res = await server.request(userPath('erin'), { headers: await bearer('erin') });
    assert.deepEqual(answerOf(res), { status: 404, body: MISSING });
  });

  test('with sign-up open, creating is sign-up and is allowed (roles must be empty)', async () => {
    await openSignup(server);
    const res = await server.request(userPath('ivan'), { method: 'PUT', headers: await bearer('ivan'), body: userBody('ivan', 'ivan-pw') });
    assert.equal(res.status, 201, res.text);
  });
});
