// Compressed attachments travel between servers as CouchDB sends them: multipart parts of a
// gzip-stored attachment are its stored bytes (`encoding`, `encoded_length`, `Content-Encoding`),
// a received gzip part is kept as sent with the sender's digest, and every follows part is checked
// against the digest it names, as CouchDB's check_md5 does.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { describeOnEachBackend } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const md5 = (bytes: Buffer): string => `md5-${createHash('md5').update(bytes).digest('base64')}`;
const AUTH = `Basic ${Buffer.from('root:r00t-pass').toString('base64')}`;
const TEXT = Buffer.from('Compressible lines of text, as CouchDB stores them gzipped.\n'.repeat(1500));
// Not what Node's zlib makes of TEXT: the bytes another zlib (CouchDB's) would have stored.
const FOREIGN_GZIP = gzipSync(TEXT, { level: 1 });

function relatedBody(doc: object, parts: Buffer[]): Buffer {
  return Buffer.concat([
    Buffer.from(`--bnd\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}`),
    ...parts.flatMap((part) => [Buffer.from('\r\n--bnd\r\nContent-Type: text/plain\r\n\r\n'), part]),
    Buffer.from('\r\n--bnd--'),
  ]);
}

function putRelated(server: TestServer, path: string, doc: object, parts: Buffer[]): ReturnType<TestServer['admin']> {
  return server.admin(path, { method: 'PUT', body: relatedBody(doc, parts), headers: { 'Content-Type': 'multipart/related; boundary="bnd"' } });
}

function replicated(id: string, attachment: object): object {
  return { _id: id, _rev: '1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', _revisions: { start: 1, ids: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'] }, _attachments: { 'a.txt': attachment } };
}

const encodedStub = (digest: string): object => ({ content_type: 'text/plain', revpos: 1, digest, length: TEXT.length, follows: true, encoding: 'gzip', encoded_length: FOREIGN_GZIP.length });

for (const level of [0, 8]) {
  describeOnEachBackend(
    `compressed attachments between servers (compression_level = ${level})`,
    (server) => {
      test('a gzip follows part is kept as sent: same digest, encoded_length and bytes; read decoded', async () => {
        await server().admin('/rep', { method: 'PUT' });
        const put = await putRelated(server(), '/rep/kept?new_edits=false', replicated('kept', encodedStub(md5(FOREIGN_GZIP))), [FOREIGN_GZIP]);
        assert.equal(put.status, 201, put.text);
        const info = (await server().admin('/rep/kept?att_encoding_info=true')).body._attachments['a.txt'];
        assert.deepEqual(info, { content_type: 'text/plain', revpos: 1, digest: md5(FOREIGN_GZIP), length: TEXT.length, stub: true, encoding: 'gzip', encoded_length: FOREIGN_GZIP.length });
        const raw = await fetch(`${server().url}/rep/kept/a.txt`, { headers: { Authorization: AUTH, 'Accept-Encoding': 'identity' } });
        assert.equal(raw.headers.get('content-encoding'), null);
        assert.ok(Buffer.from(await raw.arrayBuffer()).equals(TEXT), 'decoded for a client that does not take gzip');
        const related = await fetch(`${server().url}/rep/kept?attachments=true`, { headers: { Authorization: AUTH, Accept: 'multipart/related' } });
        assert.ok(Buffer.from(await related.arrayBuffer()).includes(FOREIGN_GZIP), 'sent on as stored');
      });

      test('a gzip follows part whose bytes do not match its digest is refused, nothing written', async () => {
        const put = await putRelated(server(), '/rep/bad?new_edits=false', replicated('bad', encodedStub(md5(TEXT))), [FOREIGN_GZIP]);
        assert.equal(put.status, 400, put.text);
        assert.match(put.body.reason, /does not match its digest/);
        assert.equal((await server().admin('/rep/bad')).status, 404);
      });

      test('an identity follows part is checked against the digest of the data sent, compressed or not', async () => {
        const stub = (digest: string): object => ({ content_type: 'text/plain', revpos: 1, digest, length: TEXT.length, follows: true });
        const good = await putRelated(server(), '/rep/plain?new_edits=false', replicated('plain', stub(md5(TEXT))), [TEXT]);
        assert.equal(good.status, 201, good.text);
        const info = (await server().admin('/rep/plain?att_encoding_info=true')).body._attachments['a.txt'];
        assert.equal(info.encoding, level === 0 ? undefined : 'gzip');
        if (level === 0) assert.equal(info.digest, md5(TEXT));
        const wrong = await putRelated(server(), '/rep/wrong?new_edits=false', replicated('wrong', stub(md5(Buffer.from('other')))), [TEXT]);
        assert.equal(wrong.status, 400, wrong.text);
      });

      test('a standalone PUT sent Content-Encoding: gzip is stored as sent, as CouchDB; another coding is 415', async () => {
        const put = await fetch(`${server().url}/rep/standalone/a.txt`, { method: 'PUT', body: FOREIGN_GZIP, headers: { Authorization: AUTH, 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' } });
        assert.equal(put.status, 201);
        const info = (await server().admin('/rep/standalone?att_encoding_info=true')).body._attachments['a.txt'];
        // CouchDB keeps the encoded length as both lengths when the upload names no other.
        assert.deepEqual(info, { content_type: 'text/plain', revpos: 1, digest: md5(FOREIGN_GZIP), length: FOREIGN_GZIP.length, stub: true, encoding: 'gzip', encoded_length: FOREIGN_GZIP.length });
        const read = await fetch(`${server().url}/rep/standalone/a.txt`, { headers: { Authorization: AUTH, 'Accept-Encoding': 'identity' } });
        assert.ok(Buffer.from(await read.arrayBuffer()).equals(TEXT));
        const deflate = await fetch(`${server().url}/rep/deflated/a.txt`, { method: 'PUT', body: 'x', headers: { Authorization: AUTH, 'Content-Type': 'text/plain', 'Content-Encoding': 'deflate' } });
        assert.equal(deflate.status, 415);
        assert.deepEqual(await deflate.json(), { error: 'bad_content_type', reason: 'Only gzip and identity content-encodings are supported' });
      });

      test('replicating to another database keeps each attachment digest and encoding', async () => {
        await server().admin('/rep-src', { method: 'PUT' });
        await server().admin('/rep-src/doc', { method: 'PUT', body: { _attachments: { 'n.txt': { content_type: 'text/plain', data: TEXT.toString('base64') } } } });
        const copied = await putRelated(server(), '/rep-src/kept?new_edits=false', replicated('kept', encodedStub(md5(FOREIGN_GZIP))), [FOREIGN_GZIP]);
        assert.equal(copied.status, 201, copied.text);
        const port = new URL(server().url).port;
        const endpoint = (db: string): string => `http://root:r00t-pass@127.0.0.1:${port}/${db}`;
        const run = await server().admin('/_replicate', { method: 'POST', body: { source: endpoint('rep-src'), target: endpoint('rep-dst'), create_target: true } });
        assert.equal(run.status, 200, run.text);
        for (const [id, name] of [['doc', 'n.txt'], ['kept', 'a.txt']] as const) {
          const source = (await server().admin(`/rep-src/${id}?att_encoding_info=true`)).body._attachments[name];
          const target = (await server().admin(`/rep-dst/${id}?att_encoding_info=true`)).body._attachments[name];
          assert.deepEqual(target, source, `${id}/${name}`);
          const data = (await server().admin(`/rep-dst/${id}?attachments=true`)).body._attachments[name].data;
          assert.ok(Buffer.from(data, 'base64').equals(TEXT));
        }
      });
    },
    `[attachments]\ncompression_level = ${level}\n`,
  );
}
