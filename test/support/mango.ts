/**
 * Mango HTTP tests run against a real server on every selected storage backend: SQLite, and
 * PostgreSQL (its own schema, dropped afterwards) when `BACKENDS` has it.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, dropSchema, POSTGRES_TEST_URL, uniqueSchema } from './backends.js';
import { startServer, type TestServer } from './server.js';

/** Five people with fields of every type (shared by the Mango suites). */
export const PEOPLE = [
  { _id: 'alice', name: 'Alice', age: 31, city: 'Paris', tags: ['a', 'b'], manager: true, address: { zip: '75001' }, 'dot.key': 'x', favs: { color: 'red' }, score: 7 },
  { _id: 'bob', name: 'Bob', age: 25, city: 'Berlin', tags: ['b'], manager: false, address: { zip: '10115' }, score: 10 },
  { _id: 'carol', name: 'Carol', age: 42, city: 'Paris', tags: [], manager: false, score: null },
  { _id: 'dave', name: 'Dave', age: 25, city: 'Rome', tags: ['c', 'a', 'b'], manager: true, favs: { colour: 'blue' }, score: 9 },
  { _id: 'erin', name: 'erin', age: '40', city: 'Oslo', nested: { 'a.b': 1 } },
];

/** The server backends to run Mango HTTP suites over. */
export const SERVER_BACKENDS = BACKENDS.map((backend) => backend.name);

/** Starts one server per suite on `backend`; call the returned function inside a test. */
export function mangoServer(backend: string, ini = ''): () => TestServer {
  let server: TestServer | undefined;
  const schema = uniqueSchema();
  before(async () => {
    const storage = backend === 'postgres' ? ['[divan]', 'storage = postgres', `postgres_url = ${POSTGRES_TEST_URL}`, `postgres_schema = ${schema}`].join('\n') : '';
    server = await startServer({ ini: `${storage}\n${ini}` });
  });
  after(async () => {
    await server?.close();
    if (backend === 'postgres') await dropSchema(POSTGRES_TEST_URL!, schema);
  });
  return () => server!;
}

/** Creates `db` with `docs` (as an admin). */
export async function seed(server: TestServer, db: string, docs: object[]): Promise<void> {
  assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
  const res = await server.admin(`/${db}/_bulk_docs`, { method: 'POST', body: { docs } });
  assert.equal(res.status, 201);
}

/** `POST /{db}/_find` as the admin. */
export function find(server: TestServer, db: string, body: object) {
  return server.admin(`/${db}/_find`, { method: 'POST', body });
}

/** The `_id`s of a successful `_find`. */
export async function findIds(server: TestServer, db: string, body: object): Promise<string[]> {
  const res = await find(server, db, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.docs.map((doc: { _id: string }) => doc._id);
}

/** Creates a json index as the admin; answers the response body. */
export async function createIndex(server: TestServer, db: string, body: object): Promise<{ result: string; id: string; name: string }> {
  const res = await server.admin(`/${db}/_index`, { method: 'POST', body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}
