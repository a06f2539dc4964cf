import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresLockout } from '../../../src/cluster/pg-lockout.js';
import { openPostgresStorage } from '../../../src/storage/postgres/postgres-storage.js';
import { Lockout, type LockoutSettings } from '../../../src/users/lockout.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../support/backends.js';

const url = POSTGRES_TEST_URL as string;
const SETTINGS: LockoutSettings = { mode: 'enforce', threshold: 3, maxObjects: 100, maxLifetimeMs: 300_000 };

/** Security issue 32, item 15: two "nodes" (each its own Lockout and pool) sharing one schema. */
describe('PostgresLockout: admission shared by the nodes of one PostgreSQL schema', { skip: POSTGRES_SKIP_REASON }, () => {
  const schema = uniqueSchema();
  const pools: pg.Pool[] = [];
  const node = (nodeId: string, attemptStaleMs?: number): PostgresLockout => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    return new PostgresLockout(new Lockout(SETTINGS), SETTINGS, { pool, schema, nodeId, onError: (message) => assert.fail(message), attemptStaleMs });
  };
  before(async () => {
    await (await openPostgresStorage({ url, schema })).close();
  });
  after(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await dropSchema(url, schema);
  });

  it('issue 32 item 15: attempts in flight on one node make the other wait, and its failures lock the other', async () => {
    const [a, b] = [node('a'), node('b')];
    const held = await Promise.all([1, 2, 3].map(() => a.admit('10.0.0.1', 'alice', 'salt-1')));
    assert.ok(held.every((ticket) => !ticket.locked));
    let decided = false;
    const waiting = b.admit('10.0.0.1', 'alice', 'salt-1').then((ticket) => ((decided = true), ticket));
    await new Promise((wake) => setTimeout(wake, 300));
    assert.equal(decided, false, 'node b waits while node a has threshold attempts in flight');
    for (const ticket of held) ticket.settle(true);
    assert.equal((await waiting).locked, true, 'three failures on node a lock the key on node b');
  });

  it('issue 32 item 15: the attempts of a node that died unsettled stop counting once stale', async () => {
    const [dead, alive] = [node('dead', 200), node('alive')];
    for (let i = 0; i < 3; i++) assert.equal((await dead.admit('10.0.0.2', 'bob', 'salt-2')).locked, false);
    const ticket = await alive.admit('10.0.0.2', 'bob', 'salt-2');
    assert.equal(ticket.locked, false, 'admitted once the dead node\u2019s rows are stale');
    ticket.settle(false);
  });

  it('issue 32 item 15: expired failure rows of keys nobody tries any more are deleted by a sweep', async () => {
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    pools.push(admin);
    const table = `${pg.escapeIdentifier(schema)}.lockout_failures`;
    await admin.query(`INSERT INTO ${table} (key, failed_at) VALUES ('forgotten', now() - interval '1 day')`);
    (await node('sweeper').admit('10.0.0.3', 'carol', 'salt-3')).settle(false);
    for (let tries = 0; ; tries++) {
      const { rowCount } = await admin.query(`SELECT 1 FROM ${table} WHERE key = 'forgotten'`);
      if (rowCount === 0) break;
      assert.ok(tries < 500, 'the expired row is still there');
      await new Promise((wake) => setTimeout(wake, 20));
    }
  });
});
