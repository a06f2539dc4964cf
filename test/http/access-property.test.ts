// Per-document access as a property: random writes, updates and deletes by three users and an admin,
// with random `_access` lists, against a model of the rules. Every answer's status is the model's,
// what each user reads with `GET /db/{id}` and `_find` is exactly the documents whose current `_access` names
// them or one of their roles, and writes by other users never change a user's private documents.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { describeOnEachBackend } from '../support/backend-servers.js';
import { PASSWORDS } from '../support/access-helpers.js';
import type { HttpOptions, HttpResponse } from '../support/http.js';
import type { TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

const USERS = ['alice', 'bob', 'carol'] as const;
type User = (typeof USERS)[number];
type Writer = User | 'admin';
const ROLES: Record<User, readonly string[]> = { alice: ['todo', 'team'], bob: ['todo'], carol: ['todo', 'team'] };
const IDS = ['d1', 'd2', 'd3', 'd4'] as const;

interface Op {
  kind: 'put' | 'delete';
  writer: Writer;
  id: string;
  /** Send the current revision (a user who knows it), or none. */
  withRev: boolean;
  /** undefined: no `_access` member at all. */
  access: string[] | undefined;
}

const op: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom<'put' | 'delete'>('put', 'put', 'delete'),
  writer: fc.constantFrom<Writer>('alice', 'bob', 'carol', 'admin'),
  id: fc.constantFrom(...IDS),
  withRev: fc.boolean(),
  access: fc.option(fc.uniqueArray(fc.constantFrom('alice', 'bob', 'carol', 'team', 'dave'), { maxLength: 3 }), { nil: undefined, freq: 8 }),
});

/** The model's view of one document: its winning revision and whether it is a tombstone. */
interface ModelDoc {
  rev: string;
  deleted: boolean;
  access: string[] | undefined;
}

function admits(access: readonly string[] | undefined, user: User): boolean {
  return access !== undefined && access.some((principal) => principal === user || ROLES[user].includes(principal));
}

/** The status the rules give to `op`, from the model alone. */
function expectedStatus(doc: ModelDoc | undefined, o: Op): number {
  const live = doc !== undefined && !doc.deleted;
  if (o.kind === 'delete') {
    if (!live) throw new Error('deleting what is not there is skipped, never expected');
    if (o.writer === 'admin') return 200;
    return admits(doc.access, o.writer) ? 200 : 404;
  }
  if (live && !o.withRev) return 409;
  if (o.writer === 'admin') return 201;
  if (live && !admits(doc.access, o.writer)) return 404;
  if (!admits(o.access, o.writer)) return 403;
  if (live && (doc.access ?? []).some((principal) => !o.access!.includes(principal))) return 403;
  return 201;
}

function call(server: TestServer, db: string, writer: Writer, path: string, options: HttpOptions = {}): Promise<HttpResponse> {
  const auth: [string, string] | undefined = writer === 'admin' ? undefined : [writer, PASSWORDS[writer]!];
  return auth === undefined ? server.admin(`/${db}${path}`, options) : server.request(`/${db}${path}`, { ...options, auth });
}

async function apply(server: TestServer, db: string, model: Map<string, ModelDoc>, o: Op): Promise<void> {
  const doc = model.get(o.id);
  const live = doc !== undefined && !doc.deleted;
  // Deleting what is not there says nothing about access: such a step is skipped.
  if (o.kind === 'delete' && !live) return;
  const expected = expectedStatus(doc, o);
  let res: HttpResponse;
  if (o.kind === 'delete') {
    res = await call(server, db, o.writer, `/${o.id}?rev=${doc!.rev}`, { method: 'DELETE' });
  } else {
    const body: Record<string, unknown> = { n: Math.random() };
    if (o.access !== undefined) body['_access'] = o.access;
    if (live && o.withRev) body['_rev'] = doc.rev;
    res = await call(server, db, o.writer, `/${o.id}`, { method: 'PUT', body });
  }
  assert.equal(res.status, expected, `${JSON.stringify(o)} on ${JSON.stringify(doc)}: ${res.text}`);
  if (res.status >= 300) return;
  // A delete keeps the access of the revision it ends.
  const access = o.kind === 'delete' ? doc!.access : o.access;
  model.set(o.id, { rev: res.body.rev, deleted: o.kind === 'delete', access });
}

/** What `user` reads of every id: the body, or undefined for the 404 of an absent document. */
async function readable(server: TestServer, db: string, user: User): Promise<Map<string, unknown>> {
  const seen = new Map<string, unknown>();
  for (const id of IDS) {
    const res = await call(server, db, user, `/${id}`);
    assert.ok(res.status === 200 || (res.status === 404 && res.body.reason !== undefined), `${user} ${id}: ${res.status} ${res.text}`);
    if (res.status === 200) seen.set(id, res.body);
  }
  return seen;
}

/** What `user`'s `_find` answers for `selector`, by id. */
async function found(server: TestServer, db: string, user: User, selector: unknown): Promise<Map<string, unknown>> {
  const res = await call(server, db, user, '/_find', { method: 'POST', body: { selector, execution_stats: true } });
  assert.equal(res.status, 200, `${user} _find: ${res.text}`);
  return new Map((res.body.docs as { _id: string }[]).map((doc) => [doc._id, doc]));
}

function modelReadable(model: Map<string, ModelDoc>, user: User): string[] {
  return [...model].filter(([, doc]) => !doc.deleted && admits(doc.access, user)).map(([id]) => id);
}

let dbCounter = 0;
async function freshDb(server: TestServer): Promise<string> {
  const db = `access-prop-${++dbCounter}`;
  assert.equal((await server.admin(`/${db}?access=true`, { method: 'PUT' })).status, 201);
  const security = { admins: { names: [], roles: [] }, members: { names: [], roles: ['todo'] } };
  assert.equal((await server.admin(`/${db}/_security`, { method: 'PUT', body: security })).status, 200);
  return db;
}

/** The documents only `user` can read: no other user (and no role another user has) is named. */
function privateTo(model: Map<string, ModelDoc>, user: User): string[] {
  const others = USERS.filter((other) => other !== user);
  return modelReadable(model, user).filter((id) => !others.some((other) => admits(model.get(id)!.access, other)));
}

describeOnEachBackend('per-document access: properties', (server) => {
  test('setup: three users with roles', async () => {
    for (const user of USERS) await createUser(server(), user, PASSWORDS[user]!, [...ROLES[user]]);
  });

  test('every answer is the model\'s, and each user reads exactly the documents whose _access names them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const db = await freshDb(server());
        const model = new Map<string, ModelDoc>();
        for (const o of ops) await apply(server(), db, model, o);
        for (const user of USERS) {
          const seen = await readable(server(), db, user);
          assert.deepEqual([...seen.keys()].sort(), modelReadable(model, user).sort(), user);
          for (const [id, body] of seen) assert.equal((body as { _rev: string })._rev, model.get(id)!.rev);
          assert.deepEqual(await found(server(), db, user, {}), seen, `${user} _find`);
        }
      }),
      { numRuns: 40 },
    );
  });

  test('no sequence of writes by other users changes a user\'s private documents', async () => {
    const victim = fc.constantFrom<User>(...USERS);
    await fc.assert(
      fc.asyncProperty(victim, fc.array(op, { minLength: 1, maxLength: 8 }), fc.array(op, { minLength: 1, maxLength: 10 }), async (user, setup, attack) => {
        const db = await freshDb(server());
        const model = new Map<string, ModelDoc>();
        for (const o of setup) await apply(server(), db, model, o);
        const before = await readable(server(), db, user);
        const owned = privateTo(model, user);
        const ownedFound = await found(server(), db, user, { _id: { $in: owned } });
        for (const o of attack) {
          if (o.writer === user || o.writer === 'admin') continue;
          await apply(server(), db, model, o);
        }
        const after = await readable(server(), db, user);
        for (const id of owned) assert.deepEqual(after.get(id), before.get(id), `${user}'s ${id}`);
        assert.deepEqual(await found(server(), db, user, { _id: { $in: owned } }), ownedFound, `${user}'s _find`);
      }),
      { numRuns: 30 },
    );
  });
}, FAST_INI + NO_LOCKOUT_INI);
