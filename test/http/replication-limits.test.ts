// Issue 32, the replicator against hostile remotes (a stub server on loopback): answers are read
// with a bound (item 5); a continuous job backs off when the remote answers at once with nothing,
// and a user runs a bounded number of jobs (item 6).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { startStubCouch, type StubCouch } from '../support/stub-couch.js';
import { FAST_INI } from '../support/users-helpers.js';

const MiB = 1024 * 1024;

describe('issue 32: the replicator against hostile remotes', () => {
  let server: TestServer;
  const stubs: StubCouch[] = [];
  before(async () => {
    server = await startServer({ ini: `${FAST_INI}[replicator]\nmax_response_size = ${MiB}\n` });
  });
  after(async () => {
    await server.close();
    for (const stub of stubs) await stub.close();
  });

  const target = (db: string): string => `http://${ADMIN[0]}:${ADMIN[1]}@${new URL(server.url).host}/${db}`;

  test('issue 32 item 5: an endless _changes answer fails the job with response_too_large past max_response_size, and the server stays responsive', { timeout: 120000 }, async () => {
    let sent = 0;
    let closed!: (sentThen: number) => void;
    const sentWhenClosed = new Promise<number>((resolve) => (closed = resolve));
    const entry = Buffer.from(`${JSON.stringify({ seq: '1-x', id: 'x'.repeat(100), changes: [{ rev: '1-a' }] })},`);
    const chunk = Buffer.concat(Array.from({ length: Math.ceil((64 * 1024) / entry.length) }, () => entry));
    const stub = await startStubCouch((_request, response) => {
      response.once('close', () => closed(sent));
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.write('{"results":[');
      // Endless for the client; the stub itself stops at 96 MiB, so a client that buffers it all
      // waits forever (then the test times out) instead of eating the machine's memory.
      const pump = (): void => {
        while (sent < 96 * MiB && !response.destroyed) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      pump();
    });
    stubs.push(stub);
    const res = await server.admin('/_replicate', { method: 'POST', body: { source: `${stub.url}/db`, target: target('huge-copy'), create_target: true } });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error, 'response_too_large');
    assert.match(res.body.reason, /_changes is over 1048576 bytes \(\[replicator\] max_response_size\)/);
    const sentThen = await sentWhenClosed;
    assert.ok(sentThen < 32 * MiB, `the replicator hung up early (after ${sentThen} bytes), it did not read the answer whole`);
    assert.equal((stub.counts.get('/db/_changes') ?? 0), 1, 'a too-large answer is not asked again');
    assert.equal((await server.request('/')).status, 200);
  });
});
