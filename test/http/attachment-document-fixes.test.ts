// COPY of a document with attachments, _purge of a document with attachments, and If-None-Match
// on attachments, as CouchDB answers them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

const md5 = (bytes: Buffer): string => `md5-${createHash('md5').update(bytes).digest('base64')}`;
const BYTES = Buffer.from('attachment bytes to copy\n'.repeat(300));

for (const level of [0, 8]) {
  describeOnEachBackend(
    `COPY and _purge of documents with attachments (compression_level = ${level})`,
    (server) => {
      test('COPY copies the attachments with their bytes, digest and encoding, to a new and to an existing document', async () => {
        await server().admin('/fix', { method: 'PUT' });
        const created = await server().admin('/fix/src', { method: 'PUT', body: { a: 1, _attachments: { 'a.txt': { content_type: 'text/plain', data: BYTES.toString('base64') } } } });
        assert.equal(created.status, 201);
        const copy = await server().admin('/fix/src', { method: 'COPY', headers: { Destination: 'dst' } });
        assert.equal(copy.status, 201, copy.text);
        const source = (await server().admin('/fix/src?att_encoding_info=true')).body._attachments['a.txt'];
        const copied = (await server().admin('/fix/dst?att_encoding_info=true')).body;
        assert.equal(copied.a, 1);
        assert.equal(copied._attachments['a.txt'].digest, source.digest);
        assert.equal(copied._attachments['a.txt'].encoding, source.encoding);
        assert.equal(copied._attachments['a.txt'].length, BYTES.length);
        const data = (await server().admin('/fix/dst?attachments=true')).body._attachments['a.txt'].data;
        assert.ok(Buffer.from(data, 'base64').equals(BYTES));
        if (level === 0) assert.equal(source.digest, md5(BYTES));
        const other = await server().admin('/fix/other', { method: 'PUT', body: { b: 2 } });
        const over = await server().admin('/fix/src', { method: 'COPY', headers: { Destination: `other?rev=${other.body.rev}` } });
        assert.equal(over.status, 201, over.text);
        const overwritten = (await server().admin('/fix/other')).body;
        assert.equal(overwritten.b, undefined);
        assert.equal(overwritten._attachments['a.txt'].digest, source.digest);
      });

      test('_purge of the current revision of a document with an attachment answers the purged revision', async () => {
        const put = await server().admin('/fix/gone', { method: 'PUT', body: { _attachments: { 'a.txt': { content_type: 'text/plain', data: BYTES.toString('base64') } } } });
        const purged = await server().admin('/fix/_purge', { method: 'POST', body: { gone: [put.body.rev] } });
        assert.equal(purged.status, 201, purged.text);
        assert.deepEqual(purged.body, { purge_seq: null, purged: { gone: [put.body.rev] } });
        assert.equal((await server().admin('/fix/gone')).status, 404);
        const plain = await server().admin('/fix/plain', { method: 'PUT', body: { x: 1 } });
        const edited = await server().admin('/fix/plain', { method: 'PUT', body: { _rev: plain.body.rev, x: 2 } });
        const both = await server().admin('/fix/_purge', { method: 'POST', body: { plain: [edited.body.rev] } });
        assert.deepEqual(both.body.purged, { plain: [edited.body.rev] });
        const standalone = await server().admin('/fix/solo/a.txt', { method: 'PUT', body: BYTES, headers: { 'Content-Type': 'text/plain' } });
        const deleted = await server().admin(`/fix/solo?rev=${standalone.body.rev}`, { method: 'DELETE' });
        const tombstone = await server().admin('/fix/_purge', { method: 'POST', body: { solo: [deleted.body.rev] } });
        assert.deepEqual(tombstone.body.purged, { solo: [deleted.body.rev] });
        const conflicted = await server().admin('/fix/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [
          { _id: 'twin', _rev: '1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', _attachments: { 'a.txt': { content_type: 'text/plain', data: BYTES.toString('base64') } } },
          { _id: 'twin', _rev: '1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', v: 2 },
        ] } });
        assert.equal(conflicted.status, 201);
        const winner = await server().admin('/fix/_purge', { method: 'POST', body: { twin: ['1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', '1-cccccccccccccccccccccccccccccccc'] } });
        assert.deepEqual(winner.body.purged, { twin: ['1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'] });
        assert.equal((await server().admin('/fix/twin')).body._rev, '1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
      });

      test('attachment If-None-Match takes the weak form and a list of ETags', async () => {
        const head = await server().admin('/fix/src/a.txt', { method: 'HEAD' });
        const etag = String(head.headers['etag']);
        assert.match(etag, /^"[A-Za-z0-9+/=]+"$/);
        for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `W/"other",W/${etag}`]) {
          const answer = await server().admin('/fix/src/a.txt', { headers: { 'If-None-Match': header } });
          assert.equal(answer.status, 304, header);
        }
        assert.equal((await server().admin('/fix/src/a.txt', { headers: { 'If-None-Match': '"other"' } })).status, 200);
      });
    },
    `[attachments]\ncompression_level = ${level}\n`,
  );
}
