import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RemoteClient } from '../../../src/replicator/http-client.js';
import { ReplicationSpecError } from '../../../src/replicator/replication-errors.js';

const SETTINGS = { connectionTimeoutMs: 1000, retries: 0, httpConnections: 1, userAgent: 'test', maxResponseBytes: 1024 * 1024 };

test('issue 32 item 2: a request http.request refuses to set up rejects the awaited promise with a 400, and nothing is left unawaited', async () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): number => unhandled.push(reason);
  process.on('unhandledRejection', record);
  try {
    // An endpoint that skipped parseEndpoint's checks (one stored before they existed).
    const client = new RemoteClient({ url: 'http://127.0.0.1:9/db/', headers: [['X-Note', 'a\r\nb']], session: false }, SETTINGS);
    await assert.rejects(client.request('GET', ''), (error: unknown) => error instanceof ReplicationSpecError && error.status === 400 && /cannot be sent/.test(error.reason));
    client.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', record);
  }
});
