// Real PouchDB 9 (memory and http adapters, replication) carrying a 1 MB random binary attachment
// both ways through Divan, byte for byte, under cookie and JWT authentication.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import PouchDB, { type PouchFetchInit } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import memoryAdapter from 'pouchdb-adapter-memory';
import replication from 'pouchdb-replication';
import { startServer, type TestServer } from '../support/server.js';

PouchDB.plugin(memoryAdapter).plugin(httpAdapter).plugin(replication);

const JWT_SECRET = randomBytes(32);
const CHAIN = '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';

/** The calls these tests make that the shared typings leave out. */
interface AttachmentDb {
  put(doc: object): Promise<{ rev: string }>;
  getAttachment(id: string, name: string): Promise<Buffer>;
  get(id: string): Promise<{ _attachments?: Record<string, { digest: string; length: number }> }>;
  replicate: { to(target: unknown): Promise<{ ok: boolean; docs_written: number }>; from(source: unknown): Promise<{ ok: boolean; docs_written: number }> };
}

type FetchFn = (url: string, init: PouchFetchInit) => Promise<Response>;

function withHeaders(extra: () => Promise<Record<string, string>>, jar?: { cookie?: string }): FetchFn {
  return async (url, init) => {
    const headers = new Headers();
    for (const [name, value] of init.headers.entries()) headers.set(name, value);
    for (const [name, value] of Object.entries(await extra())) headers.set(name, value);
    if (jar?.cookie) headers.set('Cookie', jar.cookie);
    const response = await fetch(url, { method: init.method, body: init.body, headers, signal: init.signal });
    // PouchDB reads attachments with node-fetch's `buffer()` when a response has it; a Node Blob
    // would reach its memory adapter's MD5, which takes only Buffers.
    return Object.assign(response, { buffer: async () => Buffer.from(await response.arrayBuffer()) });
  };
}

async function fetchFor(server: TestServer, method: 'cookie' | 'jwt'): Promise<FetchFn> {
  if (method === 'jwt') {
    return withHeaders(async () => ({
      Authorization: `Bearer ${await new SignJWT({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 600 }).setProtectedHeader({ alg: 'HS256' }).sign(JWT_SECRET)}`,
    }));
  }
  const login = await fetch(`${server.url}/_session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'alice', password: 'alice-pass' }) });
  assert.equal(login.status, 200);
  return withHeaders(async () => ({}), { cookie: login.headers.getSetCookie()[0]!.split(';')[0] });
}

let counter = 0;
const local = (): AttachmentDb => new PouchDB(`att-local-${process.pid}-${counter++}`, { adapter: 'memory' }) as unknown as AttachmentDb;

describe('PouchDB 9 replicates attachments through Divan', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: `[chttpd]\nauthentication_handlers = ${CHAIN}\n[jwt_keys]\nhmac:_default = ${JWT_SECRET.toString('base64')}\n[chttpd_auth]\niterations = 1000\n` });
    const user = await server.admin('/_users/org.couchdb.user:alice', { method: 'PUT', body: { name: 'alice', password: 'alice-pass', roles: [], type: 'user' } });
    assert.equal(user.status, 201);
  });
  after(async () => server.close());

  for (const method of ['cookie', 'jwt'] as const) {
    test(`${method}: a 1 MB random binary attachment pushed and pulled byte-identical`, async () => {
      const db = `att-${method}`;
      assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
      await server.admin(`/${db}/_security`, { method: 'PUT', body: { members: { names: ['alice'], roles: [] }, admins: { names: [], roles: [] } } });
      const remote = new PouchDB(`${server.url}/${db}`, { skip_setup: true, fetch: await fetchFor(server, method) });

      const pushed = randomBytes(1024 * 1024);
      const source = local();
      await source.put({ _id: 'from-pouch', _attachments: { 'blob.bin': { content_type: 'application/octet-stream', data: pushed } } });
      const push = await source.replicate.to(remote);
      assert.equal(push.ok, true);
      assert.equal(push.docs_written, 1);
      const onServer = await fetch(`${server.url}/${db}/from-pouch/blob.bin`, { headers: { Authorization: `Basic ${Buffer.from('root:r00t-pass').toString('base64')}` } });
      assert.ok(Buffer.from(await onServer.arrayBuffer()).equals(pushed), 'the server holds the bytes PouchDB pushed');

      const served = randomBytes(1024 * 1024);
      const put = await server.admin(`/${db}/from-server/photo.jpg`, { method: 'PUT', body: served, headers: { 'Content-Type': 'image/jpeg' } });
      assert.equal(put.status, 201);
      const target = local();
      const pull = await target.replicate.from(remote);
      assert.equal(pull.ok, true);
      assert.equal(pull.docs_written, 2);
      assert.ok((await target.getAttachment('from-server', 'photo.jpg')).equals(served), 'PouchDB pulled the bytes the server holds');
      assert.ok((await target.getAttachment('from-pouch', 'blob.bin')).equals(pushed), 'and the pushed ones came back unchanged');
      assert.equal((await target.get('from-pouch'))._attachments?.['blob.bin']?.digest, (await server.admin(`/${db}/from-pouch`)).body._attachments['blob.bin'].digest);
    });
  }
});
