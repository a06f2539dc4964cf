import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { infoWithSizes } from '../../../src/databases/database-sizes.js';
import type { DatabaseInfo, Storage } from '../../../src/storage/storage.js';

/**
 * A storage whose size measurement is counted and takes `costMs` on the test's own clock (`state.now`,
 * which the sizes rules read), as a large database's does: no answer depends on the machine's load.
 */
function measuredStorage(costMs: number) {
  const state = { updateSeq: 1, measured: 0, instance: '1', docs: 50_000, now: 0 };
  const info = (): DatabaseInfo => ({ name: 'db', instanceStartTime: state.instance, updateSeq: state.updateSeq, purgeSeq: 0, docCount: state.docs, deletedDocCount: 0, dataSize: 10 }) as unknown as DatabaseInfo;
  const storage = {
    async databaseInfo(_db: string, options: { sizes?: boolean } = {}) {
      if (!options.sizes) return info();
      state.measured++;
      state.now += costMs;
      return { ...info(), sizes: { file: state.updateSeq * 100, active: state.updateSeq * 50, external: 10 } };
    },
  } as unknown as Storage;
  const sizesOf = (recent = false) => infoWithSizes(storage, 'db', recent, () => state.now);
  return { storage, state, sizesOf };
}

describe('database sizes: bounded in cost', () => {
  test('a cheap measurement is taken on every request, so sizes follow what moves no sequence', async () => {
    const { state, sizesOf } = measuredStorage(0);
    await sizesOf();
    await sizesOf();
    assert.equal(state.measured, 2);
  });

  test('an unchanged database answers its kept sizes once measuring them is expensive', async () => {
    const { state, sizesOf } = measuredStorage(15);
    await sizesOf();
    await sizesOf();
    assert.equal(state.measured, 1);
  });

  test('a cheap measurement is taken again as soon as the database changes', async () => {
    const { state, sizesOf } = measuredStorage(0);
    await sizesOf();
    state.updateSeq = 2;
    assert.equal((await sizesOf())?.sizes?.file, 200);
    assert.equal(state.measured, 2);
  });

  test('an expensive measurement is not repeated on every change: the kept sizes answer until it is due', async () => {
    const { state, sizesOf } = measuredStorage(15);
    await sizesOf();
    state.updateSeq = 2;
    const answer = await sizesOf();
    assert.equal(state.measured, 1);
    assert.deepEqual([answer?.updateSeq, answer?.sizes?.file], [2, 100], 'current counts, the kept sizes');
  });

  test('a small database is measured on every request however long the measurement takes', async () => {
    const { state, sizesOf } = measuredStorage(15);
    state.docs = 10;
    await sizesOf();
    await sizesOf();
    assert.equal(state.measured, 2);
  });

  test('a database created again under the same name is measured anew', async () => {
    const { state, sizesOf } = measuredStorage(15);
    await sizesOf();
    state.instance = '2';
    await sizesOf();
    assert.equal(state.measured, 2);
  });

  test('recent sizes (req.info): a small, cheaply measured database changed on every call is measured again only once due', async () => {
    const { state, sizesOf } = measuredStorage(1);
    state.docs = 10;
    await sizesOf(true);
    state.updateSeq = 2;
    const answer = await sizesOf(true);
    assert.equal(state.measured, 1);
    assert.deepEqual([answer?.updateSeq, answer?.sizes?.file], [2, 100], 'current counts, the kept sizes');
    state.now += 49;
    assert.equal((await sizesOf(true))?.sizes?.file, 100, 'not yet due: 50 times the measurement');
    state.now += 2;
    assert.equal((await sizesOf(true))?.sizes?.file, 200, 'measured again once due');
    assert.equal(state.measured, 2);
    await sizesOf();
    assert.equal(state.measured, 3, 'GET /{db} of a small database still measures every time');
  });
});
