import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { infoWithSizes } from '../../../src/databases/database-sizes.js';
import type { DatabaseInfo, Storage } from '../../../src/storage/storage.js';

/** A storage whose size measurement is counted and takes `costMs` of the loop, as a large database's does. */
function measuredStorage(costMs: number) {
  const state = { updateSeq: 1, measured: 0, instance: '1', docs: 50_000 };
  const info = (): DatabaseInfo => ({ name: 'db', instanceStartTime: state.instance, updateSeq: state.updateSeq, purgeSeq: 0, docCount: state.docs, deletedDocCount: 0, dataSize: 10 }) as unknown as DatabaseInfo;
  const storage = {
    async databaseInfo(_db: string, options: { sizes?: boolean } = {}) {
      if (!options.sizes) return info();
      state.measured++;
      const until = performance.now() + costMs;
      while (performance.now() < until);
      return { ...info(), sizes: { file: state.updateSeq * 100, active: state.updateSeq * 50, external: 10 } };
    },
  } as unknown as Storage;
  return { storage, state };
}

describe('database sizes: bounded in cost', () => {
  test('a cheap measurement is taken on every request, so sizes follow what moves no sequence', async () => {
    const { storage, state } = measuredStorage(0);
    await infoWithSizes(storage, 'db');
    await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 2);
  });

  test('an unchanged database answers its kept sizes once measuring them is expensive', async () => {
    const { storage, state } = measuredStorage(15);
    await infoWithSizes(storage, 'db');
    await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 1);
  });

  test('a cheap measurement is taken again as soon as the database changes', async () => {
    const { storage, state } = measuredStorage(0);
    await infoWithSizes(storage, 'db');
    state.updateSeq = 2;
    assert.equal((await infoWithSizes(storage, 'db'))?.sizes?.file, 200);
    assert.equal(state.measured, 2);
  });

  test('an expensive measurement is not repeated on every change: the kept sizes answer until it is due', async () => {
    const { storage, state } = measuredStorage(15);
    await infoWithSizes(storage, 'db');
    state.updateSeq = 2;
    const answer = await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 1);
    assert.deepEqual([answer?.updateSeq, answer?.sizes?.file], [2, 100], 'current counts, the kept sizes');
  });

  test('a small database is measured on every request however long the measurement takes', async () => {
    const { storage, state } = measuredStorage(15);
    state.docs = 10;
    await infoWithSizes(storage, 'db');
    await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 2);
  });

  test('a database created again under the same name is measured anew', async () => {
    const { storage, state } = measuredStorage(15);
    await infoWithSizes(storage, 'db');
    state.instance = '2';
    await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 2);
  });

  test('recent sizes (req.info): a small, cheaply measured database changed on every call is measured again only once due', async () => {
    const { storage, state } = measuredStorage(1);
    state.docs = 10;
    await infoWithSizes(storage, 'db', true);
    state.updateSeq = 2;
    const answer = await infoWithSizes(storage, 'db', true);
    assert.equal(state.measured, 1);
    assert.deepEqual([answer?.updateSeq, answer?.sizes?.file], [2, 100], 'current counts, the kept sizes');
    // Due after 50 times the measurement (about 50 ms); a second leaves room for a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await infoWithSizes(storage, 'db', true))?.sizes?.file, 200, 'measured again once due');
    assert.equal(state.measured, 2);
    await infoWithSizes(storage, 'db');
    assert.equal(state.measured, 3, 'GET /{db} of a small database still measures every time');
  });
});
