/**
 * Two `PostgresStorage` instances on one schema stand for two Divan nodes behind a load balancer:
 * each has its own pool and its own write lanes, so only PostgreSQL's locks keep them consistent.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openPostgresStorage, type PostgresStorage } from '../../../../src/storage/postgres/postgres-storage.js';
import type { EditResult } from '../../../../src/storage/storage.js';
import { CouchError } from '../../../../src/errors/couch-error.js';
import { OPEN_SECURITY, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../../../support/backends.js';

const url = POSTGRES_TEST_URL as string;

describe('postgres: two nodes on one schema', { skip: POSTGRES_SKIP_REASON }, () => {
  let schema: string;
  let a: PostgresStorage;
  let b: PostgresStorage;

  beforeEach(async () => {
    schema = uniqueSchema();
    [a, b] = await Promise.all([openPostgresStorage({ url, schema, poolSize: 4 }), openPostgresStorage({ url, schema, poolSize: 4 })]);
    await a.createDatabase('db', OPEN_SECURITY);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
    await dropSchema(url, schema);
  });

  it('lets exactly one of two concurrent edits of one revision win, round after round', async () => {
    const [created] = await a.writeDocuments('db', [{ id: 'doc', body: { round: 0 }, deleted: false }], { newEdits: true });
    assert.ok(created.ok);
    let rev = created.rev;
    const rounds = 25;
    for (let round = 1; round <= rounds; round++) {
      const [[fromA], [fromB]] = await Promise.all([
        a.writeDocuments('db', [{ id: 'doc', body: { round, node: 'a' }, deleted: false, baseRev: rev }], { newEdits: true }),
        b.writeDocuments('db', [{ id: 'doc', body: { round, node: 'b' }, deleted: false, baseRev: rev }], { newEdits: true }),
      ]);
      const outcomes: EditResult[] = [fromA, fromB];
      const winners = outcomes.filter((result) => result.ok);
      const losers = outcomes.filter((result) => !result.ok);
      assert.equal(winners.length, 1, `round ${round}: one winner`);
      assert.deepEqual(losers, [{ ok: false, id: 'doc', error: 'conflict', reason: 'Document update conflict.' }]);
      const winner = winners[0];
      assert.ok(winner.ok);
      assert.ok(winner.rev.startsWith(`${round + 1}-`));

      // Both nodes read the same document: one new revision on top of the old one, no conflict branch.
      for (const node of [a, b]) {
        const doc = await node.readDocument('db', 'doc');
        assert.equal(doc?.rev, winner.rev);
        assert.deepEqual(doc?.conflicts, []);
        assert.deepEqual(doc?.deletedConflicts, []);
        assert.equal(doc?.revisionPath.length, round + 1);
        assert.equal(doc?.revisionPath[1], rev.slice(rev.indexOf('-') + 1));
      }
      rev = winner.rev;
    }
    const info = await b.databaseInfo('db');
    assert.equal(info?.updateSeq, rounds + 1, 'a conflict takes no sequence');
    assert.equal(info?.docCount, 1);
  });

  it('lets one of many concurrent edits win when both nodes send several at once', async () => {
    const [created] = await a.writeDocuments('db', [{ id: 'doc', body: {}, deleted: false }], { newEdits: true });
    assert.ok(created.ok);
    const edit = (n: number) => ({ id: 'doc', body: { n }, deleted: false, baseRev: created.rev });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) => (n % 2 === 0 ? a : b).writeDocuments('db', [edit(n)], { newEdits: true })),
    );
    const flat = results.flat();
    assert.equal(flat.filter((result) => result.ok).length, 1);
    assert.equal(flat.filter((result) => !result.ok && result.error === 'conflict').length, 19);
    const doc = await a.readDocument('db', 'doc');
    assert.deepEqual(doc?.conflicts, []);
    assert.equal(doc?.revisionPath.length, 2);
    assert.equal((await a.databaseInfo('db'))?.updateSeq, 2);
  });

  it('gives writes of different documents from both nodes distinct sequences', async () => {
    const perNode = 60;
    const results = await Promise.all(
      Array.from({ length: perNode * 2 }, (_, i) => {
        const node = i % 2 === 0 ? a : b;
        return node.writeDocuments('db', [{ id: `doc-${String(i).padStart(3, '0')}`, body: { i }, deleted: false }], {
          newEdits: true,
        });
      }),
    );
    assert.ok(results.flat().every((result) => result.ok));
    const changes = await a.changes('db', {});
    assert.equal(changes.length, perNode * 2);
    assert.deepEqual(
      changes.map((row) => row.seq),
      Array.from({ length: perNode * 2 }, (_, i) => i + 1),
      'every sequence used once, none skipped',
    );
    const info = await b.databaseInfo('db');
    assert.equal(info?.updateSeq, perNode * 2);
    assert.equal(info?.docCount, perNode * 2);
  });

  it('creates a database once when both nodes ask at the same time', async () => {
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).createDatabase('race', OPEN_SECURITY)),
    );
    assert.equal(created.filter(Boolean).length, 1);
  });

  it('checks local document revisions across nodes', async () => {
    const results = await Promise.all([
      a.putLocal('db', '_local/cp', { node: 'a' }, undefined),
      b.putLocal('db', '_local/cp', { node: 'b' }, undefined),
    ]);
    assert.deepEqual(
      results.map((result) => (result.ok ? result.rev : result.error)).sort(),
      ['0-1', 'conflict'],
    );
    assert.equal((await b.getLocal('db', '_local/cp'))?.rev, '0-1');
  });

  it('answers not_found to a node writing into a database another node deleted', async () => {
    assert.equal(await a.deleteDatabase('db'), true);
    await assert.rejects(
      b.writeDocuments('db', [{ id: 'x', body: {}, deleted: false }], { newEdits: true }),
      (error: unknown) => error instanceof CouchError && error.status === 404,
    );
    assert.equal(await b.deleteDatabase('db'), false);
    assert.equal(await b.createDatabase('db', OPEN_SECURITY), true);
    assert.equal((await a.databaseInfo('db'))?.updateSeq, 0);
  });
});
