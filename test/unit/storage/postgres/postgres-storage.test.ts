import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pg from 'pg';
import { redactUrl } from '../../../../src/log/redaction.js';
import { openPostgresStorage, type PostgresStorage } from '../../../../src/storage/postgres/postgres-storage.js';
import { OPEN_SECURITY, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../../support/backends.js';

const url = POSTGRES_TEST_URL as string;
const SECRET = 'pa55-w0rd-s3cret';

/** A port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `url` with another port and a password in it. */
function withPort(port: number, password = SECRET): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  parsed.password = password;
  return parsed.toString();
}

function assertOneLineConnectError(error: unknown): true {
  assert.ok(error instanceof Error);
  assert.match(error.message, /^cannot connect to PostgreSQL at \S+: \S/);
  assert.ok(!error.message.includes('\n'), 'one line');
  assert.ok(!error.message.includes(SECRET), `no password in: ${error.message}`);
  return true;
}

/**
 * A TCP relay to the real server that can be switched off (its port then refuses connections and
 * every relayed connection is cut) and on again on the same port: PostgreSQL going away and back.
 */
class SwitchableRelay {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<net.Socket>();
  #server: net.Server | undefined;
  port = 0;

  constructor(target: string) {
    const parsed = new URL(target);
    this.#target = { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) };
  }

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.#target);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('openPostgresStorage: errors', { skip: POSTGRES_SKIP_REASON }, () => {
  it('fails with one line, without the password, when nothing listens', async () => {
    const port = await closedPort();
    await assert.rejects(openPostgresStorage({ url: withPort(port) }), (error: unknown) => {
      assertOneLineConnectError(error);
      assert.ok((error as Error).message.includes(`127.0.0.1:${port}`), 'names the server');
      return true;
    });
  });

  it('fails with one line, without the password, for a database that does not exist', async () => {
    const parsed = new URL(withPort(Number(new URL(url).port || 5432)));
    parsed.pathname = '/divan_no_such_database';
    await assert.rejects(openPostgresStorage({ url: parsed.toString() }), (error: unknown) => {
      assertOneLineConnectError(error);
      assert.match((error as Error).message, /divan_no_such_database/);
      return true;
    });
  });

  it('fails with one line for an unusable URL, even with a password in it', async () => {
    await assert.rejects(
      openPostgresStorage({ url: `postgresql://postgres:${SECRET}@127.0.0.1:notaport/test`, connectTimeoutMs: 1000 }),
      assertOneLineConnectError,
    );
  });

  it('redacts passwords from URLs', () => {
    assert.equal(redactUrl(`postgresql://divan:${SECRET}@db:5432/divan`), 'postgresql://divan@db:5432/divan');
    assert.equal(
      redactUrl(`postgres://db/divan?sslmode=require&password=${SECRET}`),
      'postgres://db/divan?sslmode=require',
    );
    assert.equal(redactUrl(`postgresql://divan:${SECRET}@db:bad/divan`), 'postgresql://divan@db:bad/divan');
    assert.equal(redactUrl(`postgresql://divan:p@ss@db:bad/divan`), 'postgresql://divan@db:bad/divan');
    assert.ok(!redactUrl(`host=db password=${SECRET} dbname=divan`).includes(SECRET));
    assert.ok(!redactUrl(`host=db password='${SECRET} x' dbname=divan`).includes(SECRET));
  });
});

describe('PostgresStorage', { skip: POSTGRES_SKIP_REASON }, () => {
  let schema: string;
  let storage: PostgresStorage;

  beforeEach(async () => {
    schema = uniqueSchema();
    storage = await openPostgresStorage({ url, schema, poolSize: 4 });
    await storage.createDatabase('db', OPEN_SECURITY);
  });
  afterEach(async () => {
    await storage.close();
    await dropSchema(url, schema);
  });

  async function inspect<R extends pg.QueryResultRow>(sql: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${schema}"`);
      return (await client.query<R>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it('is of kind postgres and keeps its tables in its own schema', async () => {
    assert.equal(storage.kind, 'postgres');
    assert.equal(storage.schema, schema);
    const rows = await inspect<{ name: string }>('SELECT name FROM databases');
    assert.deepEqual(rows, [{ name: 'db' }]);
  });

  it('commits concurrent writes to one database in one transaction', async () => {
    const before = storage.committedTransactions;
    const writes = Array.from({ length: 100 }, (_, i) =>
      storage.writeDocuments('db', [{ id: `d${i}`, body: {}, deleted: false }], { newEdits: true }),
    );
    const locals = [storage.putLocal('db', '_local/a', {}, undefined), storage.putSecurity('db', { admins: {} })];
    await Promise.all([...writes, ...locals]);
    assert.equal(storage.committedTransactions, before + 1);
    await storage.writeDocuments('db', [{ id: 'later', body: {}, deleted: false }], { newEdits: true });
    assert.equal(storage.committedTransactions, before + 2);
    assert.deepEqual(await inspect('SELECT count(*)::int AS n FROM documents'), [{ n: 101 }]);
  });

  it('fails only the write PostgreSQL refuses when it shares a batch with others', async () => {
    const outcomes = await Promise.allSettled([
      storage.writeDocuments('db', [{ id: 'a', body: {}, deleted: false }], { newEdits: true }),
      // PostgreSQL text cannot hold NUL: this statement fails and aborts the shared transaction.
      storage.writeDocuments('db', [{ id: 'nul\u0000id', body: {}, deleted: false }], { newEdits: true }),
      storage.putLocal('db', '_local/b', {}, undefined),
      storage.writeDocuments('db', [{ id: 'c', body: {}, deleted: false }], { newEdits: true }),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.deepEqual((await storage.listDocuments('db', {})).rows.map((row) => row.id), ['a', 'c']);
    assert.equal((await storage.databaseInfo('db'))?.updateSeq, 2);
    assert.equal((await storage.getLocal('db', '_local/b'))?.rev, '0-1');
  });

  it('keeps bodies byte for byte, superseded ones until compaction', async () => {
    let [result] = await storage.writeDocuments('db', [{ id: 'doc', body: { v: 0 }, deleted: false }], { newEdits: true });
    for (let v = 1; v <= 3; v++) {
      assert.ok(result.ok);
      [result] = await storage.writeDocuments('db', [{ id: 'doc', body: { z: 1, v }, deleted: false, baseRev: result.rev }], {
        newEdits: true,
      });
    }
    assert.ok(result.ok);
    await storage.writeDocuments('db', [{ id: 'doc', body: { branch: true }, deleted: false, revPath: [`1-${'f'.repeat(32)}`] }], {
      newEdits: false,
    });
    const superseded = await inspect<{ body: string }>('SELECT body FROM revision_bodies WHERE NOT leaf ORDER BY rev');
    assert.deepEqual(superseded.map((row) => row.body).sort(), ['{"v":0}', '{"z":1,"v":1}', '{"z":1,"v":2}']);
    const [before] = await inspect<{ data_size: number; compactable_size: number }>(
      'SELECT data_size::int AS data_size, compactable_size::int AS compactable_size FROM databases',
    );
    assert.equal(before.data_size, '{"branch":true}'.length + '{"z":1,"v":3}'.length);
    assert.equal(before.compactable_size, '{"v":0}'.length + 2 * '{"z":1,"v":1}'.length);
    assert.equal(await storage.compact('db'), before.compactable_size);
    const bodies = await inspect('SELECT rev, body FROM revision_bodies ORDER BY rev');
    assert.deepEqual(bodies, [
      { rev: `1-${'f'.repeat(32)}`, body: '{"branch":true}' },
      { rev: result.rev, body: '{"z":1,"v":3}' },
    ]);
    const [after] = await inspect<{ compactable_size: number }>('SELECT compactable_size::int AS compactable_size FROM databases');
    assert.equal(after.compactable_size, 0);
  });

  it('refuses calls after close', async () => {
    await storage.close();
    await assert.rejects(storage.listDatabases(), /storage is closed/);
    await assert.rejects(storage.writeDocuments('db', [], { newEdits: true }), /storage is closed/);
    await assert.rejects(storage.ping(), /storage is closed/);
    await storage.close();
  });
});

describe('PostgresStorage: server going away and coming back', { skip: POSTGRES_SKIP_REASON }, () => {
  it('fails ping while unreachable, survives dropped connections, and recovers', async () => {
    const relay = new SwitchableRelay(url);
    await relay.start();
    const schema = uniqueSchema();
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    const idleErrors: Error[] = [];
    const storage = await openPostgresStorage({
      url: relayed.toString(),
      schema,
      poolSize: 3,
      connectTimeoutMs: 1000,
      pingTimeoutMs: 500,
      onError: (error) => idleErrors.push(error),
    });
    try {
      await storage.createDatabase('db', OPEN_SECURITY);
      const [first] = await storage.writeDocuments('db', [{ id: 'a', body: { v: 1 }, deleted: false }], { newEdits: true });
      assert.ok(first.ok);
      await storage.ping();

      // The port closes and every open connection is cut (idle ones included).
      await relay.stop();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(idleErrors.length >= 1, 'idle connections reported their error instead of crashing');
      await assert.rejects(storage.ping(), (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, /^PostgreSQL is unreachable: /);
        assert.ok(!error.message.includes('\n'));
        return true;
      });
      await assert.rejects(storage.readDocument('db', 'a'));
      await assert.rejects(storage.writeDocuments('db', [{ id: 'b', body: {}, deleted: false }], { newEdits: true }));

      // Back on the same port: the same storage object serves again.
      await relay.start();
      await storage.ping();
      assert.deepEqual((await storage.readDocument('db', 'a'))?.body, { v: 1 });
      const [second] = await storage.writeDocuments('db', [{ id: 'b', body: { v: 2 }, deleted: false }], { newEdits: true });
      assert.ok(second.ok);
      assert.equal((await storage.databaseInfo('db'))?.updateSeq, 2, 'the failed write left nothing behind');
    } finally {
      await storage.close();
      await relay.stop();
      await dropSchema(url, schema);
    }
  });

  it('fails ping within its timeout when the server accepts but never answers', async () => {
    const relay = new SwitchableRelay(url);
    await relay.start();
    const schema = uniqueSchema();
    const relayed = new URL(url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    const storage = await openPostgresStorage({
      url: relayed.toString(),
      schema,
      poolSize: 2,
      pingTimeoutMs: 300,
      connectTimeoutMs: 1000,
    });
    const accepted = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      accepted.add(socket);
      socket.on('error', () => undefined);
    });
    try {
      await relay.stop();
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Something now listens on the port but never speaks: connecting hangs.
      await new Promise<void>((resolve) => silent.listen(relay.port, '127.0.0.1', resolve));
      const started = Date.now();
      await assert.rejects(storage.ping(), /PostgreSQL is unreachable: .*did not answer within 300 ms/);
      assert.ok(Date.now() - started < 2000);
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
      await storage.close().catch(() => undefined);
      await dropSchema(url, schema);
    }
  });
});
