import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

/**
 * A GET of a document without parameters is answered from the text kept for its current revision
 * (the SQLite backend's cached revisions): the bytes must be those every other read serialises.
 */
describeOnEachBackend('a plain document GET and its kept reply text', (server) => {
  const body = { z: 1, 'é ☃': 'ü 𝄞 "quoted" \\ \u2028', nested: { list: [1, 2.5, 1e21, -0], none: null }, empty: {} };

  test('the same bytes as a read with parameters, on every read, and the next revision\'s after an update', async () => {
    assert.equal((await server().admin('/texts', { method: 'PUT' })).status, 201);
    const put = await server().admin('/texts/doc', { method: 'PUT', body: { ...body, _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from('hello').toString('base64') } } } });
    assert.equal(put.status, 201, put.text);
    const first = await server().admin('/texts/doc');
    const second = await server().admin('/texts/doc');
    const withParameter = await server().admin('/texts/doc?attachments=false');
    assert.equal(first.status, 200);
    assert.equal(first.text, withParameter.text, 'the rendering with parameters serialises the same bytes');
    assert.equal(second.text, first.text, 'a repeated read answers the same bytes');
    assert.ok(first.text.endsWith('}\n'));
    assert.equal(first.headers['content-length'], String(Buffer.byteLength(first.text)));
    assert.deepEqual(Object.keys(first.body), ['_id', '_rev', 'z', 'é ☃', 'nested', 'empty', '_attachments']);
    assert.equal(first.body['é ☃'], body['é ☃']);
    const head = await server().admin('/texts/doc', { method: 'HEAD' });
    assert.equal(head.headers['content-length'], first.headers['content-length']);
    assert.equal(head.headers['etag'], `"${put.body.rev}"`);

    const update = await server().admin('/texts/doc', { method: 'PUT', body: { ...first.body, z: 2 } });
    assert.equal(update.status, 201, update.text);
    const after = await server().admin('/texts/doc');
    assert.equal(after.body._rev, update.body.rev, 'the kept text went with the old revision');
    assert.equal(after.body.z, 2);
    assert.equal(after.headers['etag'], `"${update.body.rev}"`);
    assert.equal(after.text, (await server().admin('/texts/doc?revs=false')).text);
  });

  test('a deleted document is 404 deleted, not its last text', async () => {
    const put = await server().admin('/texts/gone', { method: 'PUT', body: { v: 1 } });
    assert.equal((await server().admin('/texts/gone')).status, 200);
    assert.equal((await server().admin(`/texts/gone?rev=${put.body.rev}`, { method: 'DELETE' })).status, 200);
    const res = await server().admin('/texts/gone');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { error: 'not_found', reason: 'deleted' });
  });
});
