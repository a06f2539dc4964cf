import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

function rawExchange(port: number, payload: string, waitMs: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let closed = false;
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('close', () => {
      closed = true;
      resolve({ text, closed });
    });
    socket.on('error', () => undefined);
    socket.write(payload);
    setTimeout(() => {
      if (!closed) {
        socket.destroy();
        resolve({ text, closed: false });
      }
    }, waitMs);
  });
}

describe('HTTP limits', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startServer({
      ini: '[chttpd]\nmax_http_request_size = 20000\n[couchdb]\nmax_document_size = 5000\n[divan]\nheaders_timeout = 600\nrequest_timeout = 1500\n',
    });
    port = Number(new URL(server.url).port);
    await server.admin('/limits', { method: 'PUT' });
  });
  after(async () => server.close());

  test('request headers over 64 KiB get 431 with a JSON body', async () => {
    const res = await rawExchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, 3000);
    assert.match(res.text, /^HTTP\/1\.1 431 /);
    assert.match(res.text, /"error":"request_header_fields_too_large"/);
  });

  test('a document over max_document_size is 413 too_large while reading', async () => {
    const res = await server.admin('/limits/big', { method: 'PUT', body: { pad: 'x'.repeat(6000) } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { error: 'too_large', reason: 'Document too large' });
    assert.equal((await server.admin('/limits/big')).status, 404, 'nothing was stored');
  });

  test('a body over max_http_request_size is 413 (declared length refused before reading)', async () => {
    const docs = Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, pad: 'y'.repeat(1000) }));
    const res = await server.admin('/limits/_bulk_docs', { method: 'POST', body: { docs } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { error: 'too_large', reason: 'the request entity is too large' });
  });

  test('a chunked body over the limit is cut off with 413 too', async () => {
    const chunk = 'z'.repeat(8000);
    const body = `{"docs":[{"pad":"${chunk}"},{"pad":"${chunk}"},{"pad":"${chunk}"}]}`;
    const payload = `POST /limits/_bulk_docs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Basic ${Buffer.from('root:r00t-pass').toString('base64')}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const res = await rawExchange(port, payload, 3000);
    assert.match(res.text, /^HTTP\/1\.1 413 /);
  });

  test('a client that never finishes its headers is cut off (slowloris)', async () => {
    const started = Date.now();
    const res = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1', 5000);
    assert.equal(res.closed, true, 'the server closed the connection');
    assert.ok(Date.now() - started < 5000);
    assert.equal((await server.request('/')).status, 200, 'the server still answers');
  });

  test('a malformed request line gets a 400 JSON answer', async () => {
    const res = await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n', 3000);
    assert.match(res.text, /^HTTP\/1\.1 400 /);
    assert.match(res.text, /"error":"bad_request"/);
  });

  test('an unsupported Content-Encoding is 415; gzip bodies are accepted', async () => {
    const { gzipSync } = await import('node:zlib');
    const br = await server.admin('/limits/enc', { method: 'PUT', body: '{}', headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' } });
    assert.equal(br.status, 415);
    assert.deepEqual(br.body, { error: 'bad_content_type', reason: 'br is not a supported content encoding.' });
    const gz = await server.admin('/limits/enc', { method: 'PUT', body: gzipSync('{"zipped":true}'), headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
    assert.equal(gz.status, 201);
    assert.equal((await server.admin('/limits/enc')).body.zipped, true);
  });

  test('a gzip bomb is stopped at the document limit', async () => {
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(`{"pad":"${'0'.repeat(10_000_000)}"}`);
    assert.ok(bomb.length < 20000);
    const res = await server.admin('/limits/bomb', { method: 'PUT', body: bomb, headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' } });
    assert.equal(res.status, 413);
  });
});
