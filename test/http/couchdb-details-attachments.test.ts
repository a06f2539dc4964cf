// Issue 36 item 4: attachment answers as CouchDB 3.5.0 gives them (chttpd_db's parse_ranges,
// db_attachment_req and couch_doc's stub merge).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const TEXT = 'hello attachment world';

describe('attachments answer as CouchDB 3.5.0 (issue 36 item 4)', () => {
  let server: TestServer;
  let rev: string;
  before(async () => {
    server = await startServer({ ini: '[attachments]\ncompression_level = 0\n' });
    assert.equal((await server.admin('/files', { method: 'PUT' })).status, 201);
    const body = { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from(TEXT).toString('base64') } } };
    const put = await server.admin('/files/doc', { method: 'PUT', body });
    assert.equal(put.status, 201);
    rev = (put.body as { rev: string }).rev;
  });
  after(async () => server.close());

  test('Range: bytes=0- covers the whole attachment and is answered 200 with the whole body, as CouchDB', async () => {
    const whole = await server.admin('/files/doc/a.txt', { headers: { Range: 'bytes=0-' } });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-range'], undefined);
    assert.equal(whole.text, TEXT);
    const tail = await server.admin('/files/doc/a.txt', { headers: { Range: 'bytes=1-' } });
    assert.equal(tail.status, 206);
    assert.equal(tail.headers['content-range'], `bytes 1-${TEXT.length - 1}/${TEXT.length}`);
    assert.equal(tail.text, TEXT.slice(1));
  });

  test('DELETE of an attachment of a missing document without rev is 404 not_found missing, as CouchDB', async () => {
    const answer = await server.admin('/files/nodoc/a.txt', { method: 'DELETE' });
    assert.equal(answer.status, 404);
    assert.deepEqual(answer.body, { error: 'not_found', reason: 'missing' });
  });

  test('DELETE without rev of a missing attachment of an existing document is 404, of a present one 409, as CouchDB', async () => {
    const missing = await server.admin('/files/doc/none.txt', { method: 'DELETE' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: 'not_found', reason: 'Document is missing attachment' });
    const present = await server.admin('/files/doc/a.txt', { method: 'DELETE' });
    assert.equal(present.status, 409);
    assert.equal((present.body as { error: string }).error, 'conflict');
  });

  test('a stub naming an attachment the document lacks is 412 missing_stub, as CouchDB', async () => {
    const body = { _rev: rev, _attachments: { 'a.txt': { stub: true }, 'other.txt': { stub: true } } };
    const answer = await server.admin('/files/doc', { method: 'PUT', body });
    assert.equal(answer.status, 412);
    assert.deepEqual(answer.body, { error: 'missing_stub', reason: 'Invalid attachment stub in doc for other.txt' });
    const fresh = await server.admin('/files/fresh', { method: 'PUT', body: { _attachments: { 'x.txt': { stub: true } } } });
    assert.equal(fresh.status, 412);
    assert.deepEqual(fresh.body, { error: 'missing_stub', reason: 'Previous revision missing for document fresh' });
  });

  test('a standalone PUT or DELETE naming a revision that is not stored is 409 not_found missing_rev, as CouchDB', async () => {
    const put = await server.admin('/files/doc/b.txt?rev=9-abc', { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'b' });
    assert.equal(put.status, 409);
    assert.deepEqual(put.body, { error: 'not_found', reason: 'missing_rev' });
    const deleted = await server.admin('/files/nodoc/a.txt?rev=1-abc', { method: 'DELETE' });
    assert.equal(deleted.status, 409);
    assert.deepEqual(deleted.body, { error: 'not_found', reason: 'missing_rev' });
  });
});
