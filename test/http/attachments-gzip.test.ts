// gzip storage of compressible attachment types ([attachments] compressible_types,
// compression_level), as CouchDB: stubs show encoding only with att_encoding_info, reads decode
// unless the client takes gzip, Range is ignored for encoded attachments.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import PouchDB, { type PouchFetchInit } from 'pouchdb-core';
import httpAdapter from 'pouchdb-adapter-http';
import memoryAdapter from 'pouchdb-adapter-memory';
import replication from 'pouchdb-replication';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

PouchDB.plugin(memoryAdapter).plugin(httpAdapter).plugin(replication);

interface AttachmentDb {
  put(doc: object): Promise<{ rev: string }>;
  getAttachment(id: string, name: string): Promise<Buffer>;
  replicate: { to(target: unknown): Promise<{ ok: boolean; docs_written: number }>; from(source: unknown): Promise<{ ok: boolean; docs_written: number }> };
}

/** PouchDB's fetch, as admin; `buffer()` as node-fetch has it (PouchDB's memory adapter hashes Buffers). */
async function adminFetch(url: string, init: PouchFetchInit): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of init.headers.entries()) headers.set(name, value);
  headers.set('Authorization', `Basic ${Buffer.from('root:r00t-pass').toString('base64')}`);
  const response = await fetch(url, { method: init.method, body: init.body, headers, signal: init.signal });
  return Object.assign(response, { buffer: async () => Buffer.from(await response.arrayBuffer()) });
}

const md5 = (bytes: Buffer): string => `md5-${createHash('md5').update(bytes).digest('base64')}`;
const AUTH = `Basic ${Buffer.from('root:r00t-pass').toString('base64')}`;
const TEXT = Buffer.from('All work and no play makes Jack a dull boy.\n'.repeat(2000));

/** A GET by node:http, which (unlike fetch) leaves a gzip body as it came. */
function rawGet(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers: { Authorization: AUTH, ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function putStandalone(server: TestServer, path: string, bytes: Buffer, type: string): Promise<void> {
  const put = await server.admin(path, { method: 'PUT', body: bytes, headers: { 'Content-Type': type } });
  assert.equal(put.status, 201);
}

describeOnEachBackend('attachments stored gzip-compressed', (server) => {
  test('a text/plain attachment is stored gzip: att_encoding_info shows it, length stays the identity length', async () => {
    await server().admin('/gz', { method: 'PUT' });
    await putStandalone(server(), '/gz/doc/a.txt', TEXT, 'text/plain; charset=utf-8');
    const plain = (await server().admin('/gz/doc')).body._attachments['a.txt'];
    assert.deepEqual(Object.keys(plain), ['content_type', 'revpos', 'digest', 'length', 'stub']);
    assert.equal(plain.length, TEXT.length);
    const info = (await server().admin('/gz/doc?att_encoding_info=true')).body._attachments['a.txt'];
    assert.deepEqual(Object.keys(info), ['content_type', 'revpos', 'digest', 'length', 'stub', 'encoding', 'encoded_length']);
    assert.equal(info.encoding, 'gzip');
    assert.ok(info.encoded_length < TEXT.length / 10, `encoded_length ${info.encoded_length}`);
    assert.notEqual(info.digest, md5(TEXT), 'the digest is of the stored (gzip) bytes, as CouchDB');
    const listed = (await server().admin('/gz/_all_docs?include_docs=true')).body.rows[0].doc._attachments['a.txt'];
    assert.equal(listed.encoding, undefined, 'listings show no encoding without att_encoding_info');
  });

  test('att_encoding_info=true shows the encoding in _all_docs, _changes and view rows with include_docs, as CouchDB', async () => {
    const info = (await server().admin('/gz/doc?att_encoding_info=true')).body._attachments['a.txt'];
    await server().admin('/gz/_design/v', { method: 'PUT', body: { views: { all: { map: 'function (doc) { if (doc._attachments) emit(doc._id, null); }' } } } });
    const all = (await server().admin('/gz/_all_docs?include_docs=true&att_encoding_info=true&key="doc"')).body.rows[0].doc;
    const changes = (await server().admin('/gz/_changes?include_docs=true&att_encoding_info=true')).body.results.find((row: { id: string }) => row.id === 'doc').doc;
    const view = (await server().admin('/gz/_design/v/_view/all?include_docs=true&att_encoding_info=true&key="doc"')).body.rows[0].doc;
    for (const [where, doc] of [['_all_docs', all], ['_changes', changes], ['view', view]] as const) assert.deepEqual(doc._attachments['a.txt'], info, where);
    const plainView = (await server().admin('/gz/_design/v/_view/all?include_docs=true&key="doc"')).body.rows[0].doc;
    assert.equal(plainView._attachments['a.txt'].encoding, undefined);
    await server().admin(`/gz/_design/v?rev=${(await server().admin('/gz/_design/v')).body._rev}`, { method: 'DELETE' });
  });

  test('served gzip to a client that accepts it, decoded (streamed) to one that does not; Range ignored', async () => {
    const gz = await rawGet(server(), '/gz/doc/a.txt', { 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers['accept-ranges'], 'none');
    assert.equal(gz.headers['content-length'], String(gz.body.length));
    assert.ok(gunzipSync(gz.body).equals(TEXT));
    const info = (await server().admin('/gz/doc?att_encoding_info=true')).body._attachments['a.txt'];
    assert.equal(gz.body.length, info.encoded_length);
    assert.equal(md5(gz.body), info.digest);
    const identity = await rawGet(server(), '/gz/doc/a.txt');
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.equal(identity.headers['content-length'], String(TEXT.length));
    assert.ok(identity.body.equals(TEXT));
    const refused = await rawGet(server(), '/gz/doc/a.txt', { 'Accept-Encoding': 'gzip;q=0, identity' });
    assert.ok(refused.body.equals(TEXT));
    const ranged = await rawGet(server(), '/gz/doc/a.txt', { Range: 'bytes=0-9' });
    assert.equal(ranged.status, 200);
    assert.ok(ranged.body.equals(TEXT));
  });

  test('attachments=true inline data and atts_since stubs are the identity bytes; multipart/related parts travel as stored, as CouchDB', async () => {
    const doc = (await server().admin('/gz/doc?attachments=true')).body;
    assert.ok(Buffer.from(doc._attachments['a.txt'].data, 'base64').equals(TEXT));
    assert.equal(doc._attachments['a.txt'].encoding, undefined);
    const listed = (await server().admin('/gz/_all_docs?include_docs=true&attachments=true')).body.rows[0].doc;
    assert.ok(Buffer.from(listed._attachments['a.txt'].data, 'base64').equals(TEXT));
    const changes = (await server().admin('/gz/_changes?include_docs=true&attachments=true')).body.results[0].doc;
    assert.ok(Buffer.from(changes._attachments['a.txt'].data, 'base64').equals(TEXT));
    const related = await rawGet(server(), '/gz/doc?attachments=true', { Accept: 'multipart/related' });
    const text = related.body.toString('latin1');
    const info = (await server().admin('/gz/doc?att_encoding_info=true')).body._attachments['a.txt'];
    const json = JSON.parse(/\{.*\}/.exec(text)![0]);
    assert.deepEqual(json._attachments['a.txt'], { content_type: 'text/plain; charset=utf-8', revpos: 1, digest: info.digest, length: TEXT.length, follows: true, encoding: 'gzip', encoded_length: info.encoded_length });
    assert.match(text, new RegExp(`Content-Length: ${info.encoded_length}\\r\\nContent-Encoding: gzip\\r\\n\\r\\n`));
    const stored = (await rawGet(server(), '/gz/doc/a.txt', { 'Accept-Encoding': 'gzip' })).body;
    assert.ok(related.body.includes(stored), 'the part carries the stored gzip bytes, whose MD5 is the digest');
    assert.ok(!related.body.includes(TEXT));
    const since = (await server().admin(`/gz/doc?atts_since=${encodeURIComponent(JSON.stringify([doc._rev]))}`)).body;
    assert.deepEqual(Object.keys(since._attachments['a.txt']), ['content_type', 'revpos', 'digest', 'length', 'stub']);
  });

  test('an image/png attachment is stored as sent; a stub kept across an edit keeps its encoding', async () => {
    const png = randomBytes(5000);
    const first = await server().admin('/gz/img', { method: 'PUT', body: { _attachments: { 'p.png': { content_type: 'image/png', data: png.toString('base64') }, 't.json': { content_type: 'application/json', data: TEXT.toString('base64') } } } });
    assert.equal(first.status, 201);
    const second = await server().admin('/gz/img', { method: 'PUT', body: { _rev: first.body.rev, _attachments: { 'p.png': { stub: true }, 't.json': { stub: true } } } });
    assert.equal(second.status, 201);
    const atts = (await server().admin('/gz/img?att_encoding_info=true')).body._attachments;
    assert.deepEqual(atts['p.png'], { content_type: 'image/png', revpos: 1, digest: md5(png), length: png.length, stub: true });
    assert.equal(atts['t.json'].encoding, 'gzip');
    const raw = await rawGet(server(), '/gz/img/p.png', { 'Accept-Encoding': 'gzip' });
    assert.equal(raw.headers['content-encoding'], undefined);
    assert.ok(raw.body.equals(png));
    assert.ok((await rawGet(server(), '/gz/img/t.json')).body.equals(TEXT));
  });

  test('PouchDB pushes a text attachment (stored gzip) and pulls it back byte-identical', async () => {
    await server().admin('/gzpouch', { method: 'PUT' });
    const remote = new PouchDB(`${server().url}/gzpouch`, { skip_setup: true, fetch: adminFetch });
    const source = new PouchDB(`gz-src-${process.pid}-${Math.random()}`, { adapter: 'memory' }) as unknown as AttachmentDb;
    await source.put({ _id: 'notes', _attachments: { 'n.txt': { content_type: 'text/plain', data: TEXT }, 'x.json': { content_type: 'application/json', data: Buffer.from('{"a":1}') } } });
    const push = await source.replicate.to(remote);
    assert.equal(push.docs_written, 1);
    assert.equal((await server().admin('/gzpouch/notes?att_encoding_info=true')).body._attachments['n.txt'].encoding, 'gzip');
    const target = new PouchDB(`gz-dst-${process.pid}-${Math.random()}`, { adapter: 'memory' }) as unknown as AttachmentDb;
    const pull = await target.replicate.from(remote);
    assert.equal(pull.docs_written, 1);
    assert.ok((await target.getAttachment('notes', 'n.txt')).equals(TEXT));
    assert.equal((await target.getAttachment('notes', 'x.json')).toString(), '{"a":1}');
  });
}, '[attachments]\ncompression_level = 8\n');

describeOnEachBackend(
  'attachments with compression_level = 0',
  (server) => {
    test('nothing is compressed: the digest is the MD5 of the bytes sent, Range works', async () => {
      await server().admin('/plain', { method: 'PUT' });
      await putStandalone(server(), '/plain/doc/a.txt', TEXT, 'text/plain');
      const info = (await server().admin('/plain/doc?att_encoding_info=true')).body._attachments['a.txt'];
      assert.deepEqual(info, { content_type: 'text/plain', revpos: 1, digest: md5(TEXT), length: TEXT.length, stub: true });
      const raw = await rawGet(server(), '/plain/doc/a.txt', { 'Accept-Encoding': 'gzip', Range: 'bytes=0-9' });
      assert.equal(raw.status, 206);
      assert.equal(raw.headers['content-encoding'], undefined);
      assert.ok(raw.body.equals(TEXT.subarray(0, 10)));
    });
  },
  '[attachments]\ncompression_level = 0\n',
);
