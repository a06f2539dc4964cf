import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import {
  CONFLICT,
  FAST_INI,
  MISSING,
  NO_LOCKOUT_INI,
  USER_PREFIX,
  createUser,
  deleteConfig,
  forbidden,
  readUser,
  sessionBody,
  setConfig,
  userBody,
  userPath,
  whoAmI,
} from '../support/users-helpers.js';

const SALT = '1112283cf988a34f124200a050d308a1';
const DERIVED_SHA256 = '897e67c09d4a1fb1a8fd499c9a569904fe9dc85fbbfb45f3f486fcf0bd3fa423';

interface Case {
  title: string;
  /** the document id written (the URL path) */
  id: string;
  body: Record<string, unknown>;
  reason: string;
}

/** One case per rule of reference §7.2/§7.3 that an admin can trip over; each answer is 403 forbidden. */
const CASES: Case[] = [
  { title: 'type other than "user"', id: 'ty1', body: userBody('ty1', 'pw', [], { type: 'admin' }), reason: 'doc.type must be user' },
  { title: 'type missing', id: 'ty2', body: { _id: USER_PREFIX + 'ty2', name: 'ty2', roles: [], password: 'pw' }, reason: 'doc.type must be user' },
  { title: 'name missing', id: 'nn1', body: { _id: USER_PREFIX + 'nn1', type: 'user', roles: [], password: 'pw' }, reason: 'doc.name is required' },
  { title: 'name empty', id: '', body: userBody('', 'pw'), reason: 'doc.name is required' },
  { title: 'roles missing', id: 'rl1', body: { _id: USER_PREFIX + 'rl1', name: 'rl1', type: 'user', password: 'pw' }, reason: 'doc.roles must exist' },
  { title: 'roles a string', id: 'rl2', body: userBody('rl2', 'pw', 'reader'), reason: 'doc.roles must be an array' },
  { title: 'roles [12]', id: 'rl3', body: userBody('rl3', 'pw', [12]), reason: 'doc.roles can only contain strings' },
  { title: 'id that does not match the name', id: 'idone', body: userBody('idtwo', 'pw', [], { _id: USER_PREFIX + 'idone' }), reason: 'Doc ID must be of the form org.couchdb.user:name' },
  {
    title: 'password_sha without salt',
    id: 'sha1',
    body: userBody('sha1', undefined, [], { password_scheme: 'simple', password_sha: 'd4b5d8403f6c1d1c7975fb19cbbacf260cebecdf' }),
    reason: 'Users with password_sha must have a salt.See /_utils/script/couch.js for example code.',
  },
  {
    title: 'unknown password_scheme',
    id: 'bc1',
    body: userBody('bc1', undefined, [], { password_scheme: 'bcrypt', salt: SALT, derived_key: DERIVED_SHA256 }),
    reason: 'Password scheme `bcrypt` not supported.',
  },
  {
    title: 'pbkdf2 with a non-number iterations',
    id: 'it1',
    body: userBody('it1', undefined, [], { password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: '10', derived_key: DERIVED_SHA256 }),
    reason: 'iterations must be a number.',
  },
  {
    title: 'pbkdf2 with a non-string derived_key',
    id: 'dk1',
    body: userBody('dk1', undefined, [], { password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt: SALT, iterations: 10, derived_key: 42 }),
    reason: 'derived_key must be a string.',
  },
  { title: 'system role _bar set by an admin', id: 'sys1', body: userBody('sys1', 'pw', ['_bar']), reason: 'No system roles (starting with underscore) in users db.' },
  { title: 'system role _admin set by an admin', id: 'sys2', body: userBody('sys2', 'pw', ['reader', '_admin']), reason: 'No system roles (starting with underscore) in users db.' },
  { title: 'name _why', id: '_why', body: userBody('_why', 'pw'), reason: 'Username may not start with underscore.' },
  { title: 'name joe:erlang', id: 'joe:erlang', body: userBody('joe:erlang', 'pw'), reason: 'Character `:` is not allowed in usernames.' },
  { title: 'non-string password 123', id: 'num1', body: userBody('num1', undefined, [], { password: 123 }), reason: "Password value of '123' is invalid." },
];

describe('_users: validation of user documents over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
  });
  after(async () => server.close());

  for (const { title, id, body, reason } of CASES) {
    test(`admin PUT with ${title} → 403 ${reason}`, async () => {
      const res = await server.admin(userPath(id), { method: 'PUT', body });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, forbidden(reason));
      assert.equal(res.headers['content-type'], 'application/json');
      const stored = await server.admin(userPath(id));
      assert.equal(stored.status, 404, 'nothing was stored');
      assert.deepEqual(stored.body, MISSING);
    });
  }

  test('the same rules apply to POST /_users (id from the body): _bar role and _why name → 403', async () => {
    const role = await server.admin('/_users', { method: 'POST', body: userBody('postsys', 'pw', ['_bar']) });
    assert.equal(role.status, 403);
    assert.deepEqual(role.body, forbidden('No system roles (starting with underscore) in users db.'));
    const name = await server.admin('/_users', { method: 'POST', body: userBody('_whypost', 'pw') });
    assert.equal(name.status, 403);
    assert.deepEqual(name.body, forbidden('Username may not start with underscore.'));
    const id = await server.admin('/_users', { method: 'POST', body: { ...userBody('w00x', 'pw'), _id: 'org.apache.couchdb:w00x' } });
    assert.equal(id.status, 403);
    assert.deepEqual(id.body, forbidden('Doc ID must be of the form org.couchdb.user:name'));
  });

  test('role _metrics is allowed: 201, and the user authenticates with roles ["_metrics"]', async () => {
    const res = await server.admin(userPath('metrics'), { method: 'PUT', body: userBody('metrics', 'metrics-pass', ['_metrics']) });
    assert.equal(res.status, 201);
    assert.deepEqual((await readUser(server, 'metrics'))!['roles'], ['_metrics']);
    const session = await whoAmI(server, { auth: ['metrics', 'metrics-pass'] });
    assert.equal(session.status, 200);
    assert.deepEqual(session.body, sessionBody('metrics', ['_metrics'], 'default'));
  });

  test('creating an existing user again → 409 conflict (PUT and POST); the stored doc is unchanged', async () => {
    const rev = await createUser(server, 'dupe', 'dupe-pass');
    const again = await server.admin(userPath('dupe'), { method: 'PUT', body: userBody('dupe', 'other-pass') });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, CONFLICT);
    const posted = await server.admin('/_users', { method: 'POST', body: userBody('dupe', 'other-pass') });
    assert.equal(posted.status, 409);
    assert.deepEqual(posted.body, CONFLICT);
    assert.equal((await readUser(server, 'dupe'))!['_rev'], rev);
    assert.equal((await whoAmI(server, { auth: ['dupe', 'dupe-pass'] })).status, 200);
    assert.equal((await whoAmI(server, { auth: ['dupe', 'other-pass'] })).status, 401);
  });

  test('a stored doc whose name differs from its id cannot be renamed: 403 Usernames can not be changed.', async () => {
    // Such a doc cannot be written through the API (the id rule stops it); it stands for legacy data.
    const [seeded] = await server.app.storage.writeDocuments(
      '_users',
      [{ id: USER_PREFIX + 'carl', body: { name: 'karl', type: 'user', roles: [] }, deleted: false }],
      { newEdits: true },
    );
    assert.ok(seeded!.ok);
    const rev = (await readUser(server, 'carl'))!['_rev'];
    const res = await server.admin(userPath('carl'), { method: 'PUT', body: { ...userBody('carl', 'pw'), _rev: rev } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, forbidden('Usernames can not be changed.'));
    assert.equal((await readUser(server, 'carl'))!['_rev'], rev);
  });

  describe('[chttpd_auth] password_regexp', () => {
    // CouchDB's users_db_test: four requirements, two with reasons, one with an empty reason.
    const RULES = '[{".{10,}"}, {"[A-Z]+", "Requirement 2."}, {"[a-z]+", ""}, {"\\\\d+", "Req 4."}]';
    before(async () => {
      await setConfig(server, 'chttpd_auth', 'password_regexp', RULES);
    });
    after(async () => {
      await deleteConfig(server, 'chttpd_auth', 'password_regexp');
    });

    test('the setting reads back exactly as written', async () => {
      const res = await server.admin('/_node/_local/_config/chttpd_auth/password_regexp');
      assert.equal(res.body, RULES);
    });

    const refusals: [string, string, string][] = [
      ['too short, no reason given', 'Sh0rt', 'Password does not conform to requirements.'],
      ['no uppercase, reason "Requirement 2."', 'lowercase123', 'Password does not conform to requirements. Requirement 2.'],
      ['no lowercase, empty reason', 'UPPERCASE123', 'Password does not conform to requirements.'],
      ['no digit, reason "Req 4."', 'MixedCaseOnly', 'Password does not conform to requirements. Req 4.'],
    ];
    for (const [title, password, reason] of refusals) {
      test(`a password failing a requirement (${title}) → 400 bad_request`, async () => {
        const name = `rx${password.toLowerCase()}`;
        const res = await server.admin(userPath(name), { method: 'PUT', body: userBody(name, password) });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, { error: 'bad_request', reason });
        assert.equal(await readUser(server, name), undefined);
      });
    }

    test('a password matching every requirement → 201 and it logs in', async () => {
      const res = await server.admin(userPath('rxgood'), { method: 'PUT', body: userBody('rxgood', 'GoodPassword1') });
      assert.equal(res.status, 201);
      assert.equal((await whoAmI(server, { auth: ['rxgood', 'GoodPassword1'] })).status, 200);
    });

    test('an update without a password is not checked against the requirements', async () => {
      const doc = await readUser(server, 'rxgood');
      const res = await server.admin(userPath('rxgood'), { method: 'PUT', body: { ...doc, roles: ['later'] } });
      assert.equal(res.status, 201);
    });
  });

  for (const [title, setting] of [
    ['unparsable', '[{".{10,}"'],
    ['not a list', '{".{10,}"}'],
    ['a regex that does not compile', '["("]'],
  ] as const) {
    test(`password_regexp ${title} → 403 Server cannot hash passwords at this time.`, async () => {
      await setConfig(server, 'chttpd_auth', 'password_regexp', setting);
      try {
        const name = `badrx${setting.length}`;
        const res = await server.admin(userPath(name), { method: 'PUT', body: userBody(name, 'AnyPassword1') });
        assert.equal(res.status, 403);
        assert.deepEqual(res.body, forbidden('Server cannot hash passwords at this time.'));
        assert.equal(await readUser(server, name), undefined);
      } finally {
        await deleteConfig(server, 'chttpd_auth', 'password_regexp');
      }
    });
  }

  test('an unknown [chttpd_auth] password_scheme → 403 Server cannot hash passwords at this time.', async () => {
    await setConfig(server, 'chttpd_auth', 'password_scheme', 'bcrypt');
    try {
      const res = await server.admin(userPath('bcryptuser'), { method: 'PUT', body: userBody('bcryptuser', 'pw') });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, forbidden('Server cannot hash passwords at this time.'));
    } finally {
      await deleteConfig(server, 'chttpd_auth', 'password_scheme');
    }
    assert.equal((await server.admin(userPath('bcryptuser'), { method: 'PUT', body: userBody('bcryptuser', 'pw') })).status, 201);
  });
});
