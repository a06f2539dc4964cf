import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encode } from '../../../src/collation/encode.js';
import {
  keepingProps,
  partitionedOption,
  partitionedSecurity,
  partitionKeyPrefix,
  partitionOf,
  partitionRange,
  propsOf,
  requirePartitionedId,
  validatePartition,
  withoutProps,
} from '../../../src/databases/partitions.js';
import { withinPartition } from '../../../src/http/partition-query.js';

const refusal = (run: () => void): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    const { error: code, reason } = error as { error: string; reason: string };
    return `${code}: ${reason}`;
  }
};

test('requirePartitionedId: couch_partition:validate_docid after couch_doc', () => {
  const cases: [string, string | undefined][] = [
    ['p:x', undefined],
    ['p:x:y', undefined],
    ['_design/x', undefined],
    ['_local/x', undefined],
    ['nocolon', 'illegal_docid: Doc id must be of form partition:id'],
    [':x', 'illegal_partition: Partition must not be empty'],
    ['p:', 'illegal_docid: Document id must not be empty'],
    ['p:_x', 'illegal_docid: Only reserved document ids may start with underscore.'],
  ];
  for (const [id, expected] of cases) assert.equal(refusal(() => requirePartitionedId(id)), expected, id);
});

test('validatePartition and partitionOf', () => {
  assert.equal(refusal(() => validatePartition('_x')), 'illegal_partition: Partition must not start with an underscore');
  assert.equal(refusal(() => validatePartition('a:b')), 'illegal_partition: Partition must not contain a colon');
  assert.equal(refusal(() => validatePartition('ok')), undefined);
  assert.deepEqual(['a:b:c', 'nocolon', '_design/x:y'].map(partitionOf), ['a', undefined, undefined]);
});

test('partitionedOption: PUT /{db}?partitioned=', () => {
  assert.equal(partitionedOption('db', null, '_users'), false);
  assert.equal(partitionedOption('db', 'false', '_users'), false);
  assert.equal(partitionedOption('db', 'true', '_users'), true);
  assert.equal(refusal(() => partitionedOption('db', 'TRUE', '_users')), 'bad_request: Invalid `partitioned` parameter');
  for (const db of ['_users', '_replicator', 'org/_users', 'a/b_accounts']) {
    assert.equal(refusal(() => partitionedOption(db, 'true', 'b_accounts')), 'bad_request: Cannot partition a system database', db);
  }
});

test('props are kept with _security, never shown and never set by a client', () => {
  const stored = partitionedSecurity({ members: { roles: ['_admin'] } });
  assert.deepEqual(propsOf(stored), { partitioned: true });
  assert.deepEqual(propsOf({ members: {} }), {});
  assert.deepEqual(withoutProps(stored), { members: { roles: ['_admin'] } });
  assert.deepEqual(propsOf(keepingProps({ admins: {}, divan_props: {} }, stored)), { partitioned: true });
  assert.deepEqual(propsOf(keepingProps({ divan_props: { partitioned: true } }, {})), {});
});

test('a partition is one id range, and one prefix of index keys', () => {
  assert.deepEqual(partitionRange('p'), { start: 'p:', end: 'p;' });
  assert.deepEqual(withinPartition({ startKey: 'a', endKey: 'z' }, 'p'), { startKey: 'p:', endKey: 'p;', countOffset: false });
  assert.deepEqual(withinPartition({ startKey: 'p:5' }, 'p'), { startKey: 'p:5', endKey: 'p;', countOffset: false });
  assert.deepEqual(withinPartition({ descending: true, endKey: 'p:2' }, 'p'), { descending: true, startKey: 'p;', endKey: 'p:2', countOffset: false });
  // ICU-equal names have distinct prefixes; no prefix is the start of another's keys.
  const prefixes = ['c', 'c\u200B', 'ca', 'C'].map(partitionKeyPrefix);
  assert.equal(new Set(prefixes.map((prefix) => prefix.toString('hex'))).size, 4);
  for (const a of prefixes) for (const b of prefixes) if (a !== b) assert.ok(!Buffer.concat([b, encode(1)]).subarray(0, a.length).equals(a));
});
