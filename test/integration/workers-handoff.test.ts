import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDivan, type RunningDivan } from '../support/process.js';
import { childPids, untilTrue, withTimeout } from '../support/workers.js';

/** What became of one raw connection: the status line it was answered with, or '' when it was closed unanswered. */
function oneRequest(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolveEnd) => {
    let received = '';
    const socket = connect(Number(port), hostname, () => socket.write('GET /_up HTTP/1.1\r\nHost: divan\r\nConnection: close\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolveEnd(received.split('\r\n')[0] ?? ''));
  });
}

describe('the real binary with two workers: a connection handed to a worker that dies is not left open', () => {
  let data: string;
  let divan: RunningDivan;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'divan-handoff-'));
    divan = await startDivan(['--port', '0', '--workers', '2', '--data', data], { COUCHDB_USER: 'boss', COUCHDB_PASSWORD: 'b0ss-pass' });
  });
  after(async () => {
    await divan.stop();
    rmSync(data, { recursive: true, force: true });
  });

  test('issue 32 item 13: connections sent to a stopped worker that is then killed are answered or closed, none hangs', async () => {
    const [victim] = childPids(divan.child.pid!);
    // A stopped worker reads nothing: round robin still hands it its turn of the connections.
    process.kill(victim!, 'SIGSTOP');
    const ends = Array.from({ length: 6 }, () => oneRequest(divan.url));
    // Long enough for the primary to have handed a connection to each worker.
    await new Promise((wait) => setTimeout(wait, 1000));
    process.kill(victim!, 'SIGKILL');
    const outcomes = await withTimeout(Promise.all(ends), 30000);
    for (const outcome of outcomes) assert.ok(outcome === '' || outcome === 'HTTP/1.1 200 OK', outcome);
    assert.ok(outcomes.includes('HTTP/1.1 200 OK'), 'the live worker answered its share');
    // The replacement serves new connections.
    await untilTrue(async () => childPids(divan.child.pid!).length === 2 && !childPids(divan.child.pid!).includes(victim!));
    assert.equal(await withTimeout(oneRequest(divan.url), 30000), 'HTTP/1.1 200 OK');
  });
});
