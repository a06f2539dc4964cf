/**
 * HTTP limits and slow clients, with a poller asking `GET /` every 100 ms throughout: the server
 * must keep answering it while bodies are refused, slow clients are cut off and idle connections
 * pile up. test/http/limits.test.ts already covers one oversized header (431), a declared or
 * chunked body over the limit (413), a document over max_document_size, a client that stops in
 * the middle of its headers, a malformed request line and a gzip bomb; this file adds what those
 * do not show: the body is refused while the client is still sending (not after buffering it),
 * byte-by-byte slowloris on headers and on bodies, hundreds of idle and half-open connections,
 * many small headers and an oversized request line.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';

import { isCouchError } from '../../src/errors/couch-error.js';
import { Request } from '../../src/http/request.js';
import {
  assertNoUnexpectedErrors,
  basicValue,
  parseResponse,
  raw,
  sleep,
} from '../support/hardening.js';
import { latencyBound, slowestOf } from '../support/latency-bound.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

const HEADERS_TIMEOUT = 800;
const REQUEST_TIMEOUT = 2000;
const KEEPALIVE_TIMEOUT = 1000;
const MAX_REQUEST = 1024 * 1024;
const MAX_DOCUMENT = 64 * 1024;

/** Asks `GET /` every `intervalMs` until stopped; every answer must be a 200. */
function pollRoot(port: number, intervalMs = 100): { stop: () => Promise<{ answers: number; failures: string[]; slowestMs: number }> } {
  let running = true;
  let answers = 0;
  let slowestMs = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      try {
        const res = await raw(port, { target: '/' }, 3000);
        if (res.status !== 200) failures.push(`status ${res.status}`);
        else answers++;
      } catch (error) {
        failures.push((error as Error).message);
      }
      slowestMs = Math.max(slowestMs, Date.now() - started);
      await sleep(intervalMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { answers, failures, slowestMs };
    },
  };
}

/** The slowest of a few `GET /` with nothing else going on, measured once the server started. */
let idleRootMs = 0;

/**
 * Every poll answered, none slow. `minimum` is kept small: how many polls fit in a test depends on
 * how busy the machine is; a server that stopped answering fails the slowest-poll bound anyway.
 */
async function assertRootAnsweredThroughout(poller: ReturnType<typeof pollRoot>, minimum: number): Promise<void> {
  const { answers, failures, slowestMs } = await poller.stop();
  assert.deepEqual(failures, [], 'GET / never failed');
  assert.ok(answers >= minimum, `GET / answered ${answers} times`);
  const bound = latencyBound(idleRootMs, 1500);
  assert.ok(slowestMs < bound, `the slowest GET / took ${slowestMs} ms (bound ${bound.toFixed(0)} ms, idle ${idleRootMs.toFixed(1)} ms)`);
}

interface Watched {
  socket: Socket;
  received: () => Buffer;
  closedAt: () => number | undefined;
}

function open(port: number): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedAt: number | undefined;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => (closedAt = Date.now()));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => Buffer.concat(chunks), closedAt: () => closedAt }));
    socket.once('error', reject);
  });
}

async function waitUntil(check: () => boolean, limitMs: number): Promise<boolean> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > limitMs) return false;
    await sleep(25);
  }
  return true;
}

/**
 * Streams a chunked body in 64 KiB chunks (respecting backpressure) until the server answers or
 * `maxBytes` are written; resolves with the bytes written when the first answer byte arrived.
 */
async function streamUntilAnswered(port: number, head: string, maxBytes: number): Promise<{ sentBeforeAnswer: number; answer: Buffer; closed: boolean }> {
  const peer = await open(port);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  let sent = 0;
  let sentBeforeAnswer = -1;
  peer.socket.once('data', () => (sentBeforeAnswer = sent));
  peer.socket.write(head);
  // The body is a JSON string that never ends: `{"pad":"aaaa…`.
  peer.socket.write(Buffer.from(`9\r\n{"pad":"a\r\n`));
  while (sentBeforeAnswer === -1 && sent < maxBytes && peer.closedAt() === undefined && !peer.socket.destroyed) {
    const flushed = peer.socket.write(framed);
    sent += chunk.length;
    if (!flushed) {
      await Promise.race([new Promise((resolve) => peer.socket.once('drain', resolve)), sleep(200)]);
    }
  }
  await waitUntil(() => sentBeforeAnswer !== -1 || peer.closedAt() !== undefined, 5000);
  const closed = await waitUntil(() => peer.closedAt() !== undefined, 3000);
  peer.socket.destroy();
  return { sentBeforeAnswer: sentBeforeAnswer === -1 ? sent : sentBeforeAnswer, answer: peer.received(), closed };
}

describe('HTTP limits and slow clients, with GET / answered throughout', () => {
  let server: TestServer;
  let port: number;
  const auth = basicValue(...ADMIN);

  before(async () => {
    server = await startServer({
      ini: [
        '[chttpd]', `max_http_request_size = ${MAX_REQUEST}`,
        '[couchdb]', `max_document_size = ${MAX_DOCUMENT}`,
        '[divan]', `headers_timeout = ${HEADERS_TIMEOUT}`, `request_timeout = ${REQUEST_TIMEOUT}`, `keepalive_timeout = ${KEEPALIVE_TIMEOUT}`,
        '[chttpd_auth]', 'iterations = 1000',
      ].join('\n'),
    });
    port = Number(new URL(server.url).port);
    assert.equal((await server.admin('/lim', { method: 'PUT' })).status, 201);
    idleRootMs = await slowestOf(() => raw(port, { target: '/' }, 3000));
  });

  after(async () => {
    assertNoUnexpectedErrors(server.logs);
    await server.close();
  });

  test('a document streamed without end is refused with 413 while the client is still sending it', async (t) => {
    const poller = pollRoot(port);
    const rssBefore = process.memoryUsage().rss;
    const head = `PUT /lim/endless HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const result = await streamUntilAnswered(port, head, 256 * 1024 * 1024);
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    t.diagnostic(`document limit ${MAX_DOCUMENT} B: answered after ${(result.sentBeforeAnswer / 1048576).toFixed(1)} MiB written by the client (kernel buffers included); rss +${(rssGrowth / 1048576).toFixed(1)} MiB`);
    const res = parseResponse(result.answer);
    assert.equal(res?.status, 413, result.answer.toString('latin1').slice(0, 200));
    assert.deepEqual(res?.json, { error: 'too_large', reason: 'Document too large' });
    // Without the limit the client would have written 256 MiB; loopback socket buffers hold a few.
    assert.ok(result.sentBeforeAnswer < 24 * 1024 * 1024, `answered after ${result.sentBeforeAnswer} bytes`);
    assert.ok(result.closed, 'the server closed the connection (Connection: close)');
    assert.ok(rssGrowth < 96 * 1024 * 1024, `rss grew by ${rssGrowth} bytes`);
    assert.equal((await server.admin('/lim/endless')).status, 404);
    await assertRootAnsweredThroughout(poller, 1);
  });

  test('a _bulk_docs body streamed past max_http_request_size is refused with 413 while it is being sent', async (t) => {
    const poller = pollRoot(port);
    const head = `POST /lim/_bulk_docs HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const result = await streamUntilAnswered(port, head, 256 * 1024 * 1024);
    t.diagnostic(`request limit ${MAX_REQUEST} B: answered after ${(result.sentBeforeAnswer / 1048576).toFixed(1)} MiB written by the client`);
    const res = parseResponse(result.answer);
    assert.equal(res?.status, 413);
    assert.deepEqual(res?.json, { error: 'too_large', reason: 'the request entity is too large' });
    assert.ok(result.sentBeforeAnswer < 24 * 1024 * 1024, `answered after ${result.sentBeforeAnswer} bytes`);
    assert.ok(result.closed);
    await assertRootAnsweredThroughout(poller, 1);
  });

  test('a declared Content-Length of 10 GiB is refused before a single body byte is sent', async () => {
    const peer = await open(port);
    const started = Date.now();
    peer.socket.write(`PUT /lim/huge HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 ** 3}\r\n\r\n`);
    assert.ok(await waitUntil(() => peer.received().includes('\r\n\r\n'), 3000), 'an answer without any body');
    const res = parseResponse(peer.received());
    assert.equal(res?.status, 413);
    assert.ok(Date.now() - started < latencyBound(idleRootMs, 1000), 'answered without waiting for the body');
    peer.socket.destroy();
  });

  test('slowloris on headers: one byte every 100 ms is cut off at headers_timeout', async () => {
    const poller = pollRoot(port);
    const peers = await Promise.all(Array.from({ length: 20 }, () => open(port)));
    const started = Date.now();
    const text = `GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`;
    let index = 0;
    while (peers.some((peer) => peer.closedAt() === undefined) && Date.now() - started < HEADERS_TIMEOUT * 6) {
      for (const peer of peers) if (peer.closedAt() === undefined) peer.socket.write(text[index % text.length]!);
      index++;
      await sleep(100);
    }
    for (const peer of peers) {
      assert.ok(peer.closedAt() !== undefined, 'the trickling client was cut off');
      assert.ok(peer.closedAt()! - started < HEADERS_TIMEOUT + 1500, `cut off after ${peer.closedAt()! - started} ms`);
      const answer = peer.received().toString('latin1');
      // Node answers 408 when it can; a destroyed socket without an answer is fine too.
      if (answer !== '') assert.match(answer, /^HTTP\/1\.1 408 /);
    }
    await assertRootAnsweredThroughout(poller, 2);
  });

  test('slowloris on bodies: a body sent one byte every 200 ms is cut off at request_timeout', async () => {
    const poller = pollRoot(port);
    const peers = await Promise.all(Array.from({ length: 10 }, () => open(port)));
    const started = Date.now();
    for (const peer of peers) {
      peer.socket.write(`PUT /lim/slow HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
    }
    while (peers.some((peer) => peer.closedAt() === undefined) && Date.now() - started < REQUEST_TIMEOUT * 3) {
      for (const peer of peers) if (peer.closedAt() === undefined) peer.socket.write(' ');
      await sleep(200);
    }
    for (const peer of peers) {
      assert.ok(peer.closedAt() !== undefined, 'the slow body was cut off');
      assert.ok(peer.closedAt()! - started < REQUEST_TIMEOUT + 1500, `cut off after ${peer.closedAt()! - started} ms`);
    }
    assert.equal((await server.admin('/lim/slow')).status, 404, 'nothing half-written was stored');
    await assertRootAnsweredThroughout(poller, 2);
  });

  test('a body whose client goes away ends the read with a 400, plain or gzip (no handler left waiting forever)', async () => {
    // Real sockets cannot show a handler that never finishes (a destroyed response writes no
    // log line either way), so this drives Request.body() over a stream destroyed like Node
    // destroys an IncomingMessage whose socket closed mid-body.
    for (const encoding of ['identity', 'gzip']) {
      const incoming = Object.assign(new PassThrough(), { method: 'PUT', headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      const request = new Request(incoming as unknown as IncomingMessage, {
        segments: ['lim', 'x'], query: new URLSearchParams(), path: '/lim/x', peer: '127.0.0.1', secure: false, viaTrustedProxy: false, id: 't', limits: { maxRequestBytes: MAX_REQUEST },
      });
      const reading = request.body(MAX_DOCUMENT);
      incoming.write(gzipSync(JSON.stringify({ pad: 'x'.repeat(5000) })).subarray(0, 20));
      await sleep(20);
      incoming.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      const outcome = await Promise.race([reading.then(() => 'resolved', (error: unknown) => error), sleep(2000).then(() => 'still waiting')]);
      assert.ok(isCouchError(outcome) && outcome.status === 400, `${encoding}: ${String(outcome)}`);
    }
  });

  test('300 idle connections and 100 with half-sent headers do not starve new ones, and are closed', async (t) => {
    const burstOf50 = (): Promise<Awaited<ReturnType<typeof raw>>[]> => Promise.all(Array.from({ length: 50 }, () => raw(port, { target: '/' }, 3000)));
    const idleBurstMs = await slowestOf(burstOf50, 1);
    const poller = pollRoot(port, 50);
    const idle = await Promise.all(Array.from({ length: 300 }, () => open(port)));
    const halfOpen = await Promise.all(Array.from({ length: 100 }, () => open(port)));
    for (const peer of halfOpen) peer.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    // While they all hang around, a burst of new requests is answered promptly.
    const started = Date.now();
    const burst = await burstOf50();
    const burstMs = Date.now() - started;
    t.diagnostic(`50 new requests beside 400 stalled connections: all answered in ${burstMs} ms (${idleBurstMs.toFixed(0)} ms without them)`);
    assert.ok(burst.every((res) => res.status === 200));
    assert.ok(burstMs < latencyBound(idleBurstMs, 2000, 10));
    const all = [...idle, ...halfOpen];
    const allClosed = await waitUntil(() => all.every((peer) => peer.closedAt() !== undefined), HEADERS_TIMEOUT + 3000);
    const open_ = all.filter((peer) => peer.closedAt() === undefined).length;
    for (const peer of all) peer.socket.destroy();
    assert.ok(allClosed, `${open_} of ${all.length} stalled connections still open after ${HEADERS_TIMEOUT + 3000} ms`);
    await assertRootAnsweredThroughout(poller, 3);
  });

  test('100 keep-alive connections left idle after a request are closed at keepalive_timeout', async () => {
    const peers = await Promise.all(Array.from({ length: 100 }, () => open(port)));
    for (const peer of peers) peer.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    assert.ok(await waitUntil(() => peers.every((peer) => peer.received().includes('"couchdb":"Welcome"')), 3000));
    const answered = Date.now();
    assert.ok(await waitUntil(() => peers.every((peer) => peer.closedAt() !== undefined), KEEPALIVE_TIMEOUT + 3000), 'idle keep-alive connections were closed');
    const latest = Math.max(...peers.map((peer) => peer.closedAt()!)) - answered;
    assert.ok(latest < KEEPALIVE_TIMEOUT + 2000, `closed after ${latest} ms`);
  });

  test('many small headers adding up past 64 KiB get 431; so does a request line past 64 KiB', async () => {
    const headers: [string, string][] = Array.from({ length: 1500 }, (_, i) => [`X-H${i}`, 'v'.repeat(40)]);
    const many = await raw(port, { target: '/', headers });
    assert.equal(many.status, 431);
    assert.equal(many.json.error, 'request_header_fields_too_large');
    const longLine = await raw(port, { target: `/${'a'.repeat(70 * 1024)}` });
    assert.ok(longLine.status === 431 || longLine.status === 414, `status ${longLine.status}`);
    assert.equal(typeof longLine.json?.error, 'string');
    assert.equal((await raw(port, { target: '/' })).status, 200);
  });
});
