// Issue 32 item 1: the headers that keep attachments from running script on the server's origin,
// and content types that could split an answer's headers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

describe('attachment answers carry a sandboxing policy (issue 32 item 1)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: '[attachments]\ncompression_level = 0\n' });
    assert.equal((await server.admin('/pics', { method: 'PUT' })).status, 201);
    const body = { _attachments: { 'a.html': { content_type: 'text/html', data: Buffer.from('<b>hi</b>').toString('base64') } } };
    assert.equal((await server.admin('/pics/page', { method: 'PUT', body })).status, 201);
  });
  after(async () => server.close());

  async function setCsp(key: string, value: string | undefined): Promise<void> {
    const path = `/_node/_local/_config/csp/${key}`;
    const answer = value === undefined ? await server.admin(path, { method: 'DELETE' }) : await server.admin(path, { method: 'PUT', body: JSON.stringify(value) });
    assert.equal(answer.status, 200);
  }

  test('issue 32 item 1: GET, HEAD, a range and a 304 all send Content-Security-Policy: sandbox and nosniff', async () => {
    const get = await server.admin('/pics/page/a.html');
    assert.equal(get.status, 200);
    assert.equal(get.headers['content-security-policy'], 'sandbox');
    assert.equal(get.headers['x-content-type-options'], 'nosniff');
    assert.equal(get.headers['content-disposition'], undefined, 'rendered inline, as CouchDB');
    const head = await server.admin('/pics/page/a.html', { method: 'HEAD' });
    assert.equal(head.headers['content-security-policy'], 'sandbox');
    const range = await server.admin('/pics/page/a.html', { headers: { Range: 'bytes=0-2' } });
    assert.equal(range.status, 206);
    assert.equal(range.headers['content-security-policy'], 'sandbox');
    const cached = await server.admin('/pics/page/a.html', { headers: { 'If-None-Match': get.headers['etag'] as string } });
    assert.equal(cached.status, 304);
    assert.equal(cached.headers['content-security-policy'], 'sandbox');
  });

  test('issue 32 item 1: [csp] attachments_header_value is sent as configured; a policy that lets script run on the origin makes active types of ordinary documents downloads', async () => {
    await setCsp('attachments_header_value', "sandbox; default-src 'none'");
    try {
      assert.equal((await server.admin('/pics/page/a.html')).headers['content-security-policy'], "sandbox; default-src 'none'");
      await setCsp('attachments_header_value', 'sandbox allow-scripts allow-same-origin');
      const relaxed = await server.admin('/pics/page/a.html');
      assert.equal(relaxed.headers['content-disposition'], "attachment; filename*=UTF-8''a.html");
    } finally {
      await setCsp('attachments_header_value', undefined);
    }
  });

  test('issue 32 item 1: with the policy disabled, design-document pages render (CouchApps) and ordinary documents\' active types download; inert types stay inline', async () => {
    await setCsp('attachments_enable', 'false');
    try {
      const plain = await server.admin('/pics/page/a.html');
      assert.equal(plain.headers['content-security-policy'], undefined);
      assert.equal(plain.headers['content-disposition'], "attachment; filename*=UTF-8''a.html");
      const ddoc = { _attachments: { 'dir/index.html': { content_type: 'text/html', data: Buffer.from('<p>app</p>').toString('base64') }, 'logo.png': { content_type: 'image/png', data: 'iVBORw0K' } } };
      assert.equal((await server.admin('/pics/_design/app', { method: 'PUT', body: ddoc })).status, 201);
      assert.equal((await server.admin('/pics/_design/app/dir/index.html')).headers['content-disposition'], undefined);
      const body = { _attachments: { 'logo.png': { content_type: 'image/png', data: 'iVBORw0K' } } };
      assert.equal((await server.admin('/pics/logo', { method: 'PUT', body })).status, 201);
      assert.equal((await server.admin('/pics/logo/logo.png')).headers['content-disposition'], undefined);
    } finally {
      await setCsp('attachments_enable', undefined);
    }
  });

  test('issue 32 item 1: a content_type holding CR LF is refused with 400 (inline and in _bulk_docs) and the server keeps answering', async () => {
    const evil = { _attachments: { 'x.html': { content_type: 'text/html\r\nSet-Cookie: a=b', data: Buffer.from('x').toString('base64') } } };
    const put = await server.admin('/pics/evil', { method: 'PUT', body: evil });
    assert.equal(put.status, 400);
    assert.equal(put.body.error, 'bad_request');
    assert.match(put.body.reason, /content_type/);
    const bulk = await server.admin('/pics/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'evil2', ...evil }] } });
    assert.equal(bulk.status, 201);
    assert.equal(bulk.body[0].error, 'bad_request');
    assert.equal((await server.admin('/pics/evil')).status, 404, 'nothing stored');
    assert.equal((await server.request('/_up')).status, 200);
  });
});
