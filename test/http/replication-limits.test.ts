// Issue 32, the replicator against hostile remotes (a stub server on loopback): answers are read
// with a bound (item 5); a continuous job backs off when the remote answers at once with nothing,
// and a user runs a bounded number of jobs (item 6).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { startStubCouch, type StubCouch } from '../support/stub-couch.js';
import { FAST_INI, createUser } from '../support/users-helpers.js';

const MiB = 1024 * 1024;

describe('issue 32: the replicator against hostile remotes', () => {
  let server: TestServer;
  const stubs: StubCouch[] = [];
  before(async () => {
    server = await startServer({ ini: `${FAST_INI}[replicator]\nmax_response_size = ${MiB}\nmax_jobs_per_user = 2\n` });
    await createUser(server, 'ann', 'ann-pass');
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

  const emptyAtOnce = () => startStubCouch((_request, response) => void response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"results":[],"last_seq":"1-x"}'));

  test('issue 32 item 6: a continuous job against a remote that answers _changes at once with nothing backs off', { timeout: 60000 }, async () => {
    const stub = await emptyAtOnce();
    stubs.push(stub);
    const started = await server.admin('/_replicate', { method: 'POST', body: { source: `${stub.url}/db`, target: target('idle-copy'), create_target: true, continuous: true } });
    assert.equal(started.status, 202, started.text);
    const windowMs = 4000;
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const asked = stub.counts.get('/db/_changes') ?? 0;
    await server.admin('/_replicate', { method: 'POST', body: { cancel: true, replication_id: started.body._local_id } });
    // With idle_backoff = 1 s doubling: about 3 requests in 4 s; without a back-off, thousands.
    assert.ok(asked >= 1 && asked <= 12, `${asked} _changes requests in ${windowMs} ms`);
  });

  test('issue 32 item 6: a user who is not a server admin gets 429 too_many_jobs past max_jobs_per_user; a server admin is not capped', { timeout: 60000 }, async () => {
    const stub = await emptyAtOnce();
    stubs.push(stub);
    const job = (auth: [string, string], n: number) =>
      server.request('/_replicate', { method: 'POST', auth, body: { source: `${stub.url}/db`, target: `${stub.url}/db`, continuous: true, since_seq: `${n}-x` } });
    const ann: [string, string] = ['ann', 'ann-pass'];
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const res = await job(ann, n);
      assert.equal(res.status, 202, res.text);
      ids.push(res.body._local_id);
    }
    const third = await job(ann, 3);
    assert.equal(third.status, 429, third.text);
    assert.equal(third.body.error, 'too_many_jobs');
    assert.match(third.body.reason, /max_jobs_per_user/);
    for (const n of [4, 5, 6]) {
      const res = await job(ADMIN, n);
      assert.equal(res.status, 202, res.text);
      ids.push(res.body._local_id);
    }
    for (const id of ids) assert.equal((await server.admin('/_replicate', { method: 'POST', body: { cancel: true, replication_id: id } })).status, 200);
    const again = await job(ann, 3);
    assert.equal(again.status, 202, 'a cancelled job frees its place');
    await server.admin('/_replicate', { method: 'POST', body: { cancel: true, replication_id: again.body._local_id } });
  });

  test('issue 32 item 6: a _replicator document past its owner\'s max_jobs_per_user is marked failed with too_many_jobs', { timeout: 60000 }, async () => {
    const stub = await emptyAtOnce();
    stubs.push(stub);
    const members = { admins: { names: [], roles: [] }, members: { names: ['ann'], roles: [] } };
    assert.equal((await server.admin('/_replicator/_security', { method: 'PUT', body: members })).status, 200);
    for (const n of [1, 2, 3]) {
      const body = { source: `${stub.url}/db`, target: `${stub.url}/db`, continuous: true, since_seq: `${10 + n}-x` };
      const put = await server.request(`/_replicator/ann-${n}`, { method: 'PUT', auth: ['ann', 'ann-pass'], body });
      assert.equal(put.status, 201, put.text);
    }
    const states = async () => Promise.all([1, 2, 3].map(async (n) => (await server.admin(`/_replicator/ann-${n}`)).body as Record<string, unknown>));
    const deadline = Date.now() + 20000;
    let docs = await states();
    while (!docs.some((doc) => doc['_replication_state'] === 'failed') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      docs = await states();
    }
    const failed = docs.filter((doc) => doc['_replication_state'] === 'failed');
    assert.equal(failed.length, 1, JSON.stringify(docs));
    assert.match(String(failed[0]!['_replication_state_reason']), /^too_many_jobs: .*max_jobs_per_user/);
    for (const doc of docs) assert.equal((await server.admin(`/_replicator/${doc['_id']}?rev=${doc['_rev']}`, { method: 'DELETE' })).status, 200);
  });
});
