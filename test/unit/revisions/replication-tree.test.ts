import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeRevision, leavesFrom, revisionsDiff, selectRevisions, type RevisionTree } from '../../../src/revisions/revision-tree.js';

const r = (generation: number, digit: string): string => `${generation}-${digit.repeat(32)}`;
const A1 = r(1, 'a');
const B2 = r(2, 'b');
const C2 = r(2, 'c');
const D3 = r(3, 'd');
const E2 = r(2, 'e');

/** 1-a ─┬─ 2-b ── 3-d ;  ├─ 2-c (deleted) ;  └─ 2-e */
const TREE: RevisionTree = {
  [A1]: { parent: null, deleted: false },
  [B2]: { parent: A1, deleted: false },
  [D3]: { parent: B2, deleted: false },
  [C2]: { parent: A1, deleted: true },
  [E2]: { parent: A1, deleted: false },
};

describe('selectRevisions (open_revs)', () => {
  const cases: [string, 'all' | string[], boolean, { found: string[]; missing: string[] }][] = [
    ['all leaves, winner order', 'all', false, { found: [D3, E2, C2], missing: [] }],
    ['asked leaves in asked order, duplicates once', [E2, D3, E2], false, { found: [E2, D3], missing: [] }],
    ['interior revision without latest is found (its body decides)', [B2, D3], false, { found: [B2, D3], missing: [] }],
    ['interior revision with latest opens its leaves', [B2], true, { found: [D3], missing: [] }],
    ['the root with latest opens every leaf', [A1], true, { found: [D3, E2, C2], missing: [] }],
    ['latest does not repeat a leaf also asked for', [D3, B2], true, { found: [D3], missing: [] }],
    ['unknown revisions are missing', [r(9, 'f')], true, { found: [], missing: [r(9, 'f')] }],
  ];
  for (const [title, revs, latest, expected] of cases) {
    it(title, () => assert.deepEqual(selectRevisions(TREE, revs, latest), expected));
  }
  it('an unknown document: nothing for all, everything missing otherwise', () => {
    assert.deepEqual(selectRevisions(undefined, 'all', false), { found: [], missing: [] });
    assert.deepEqual(selectRevisions(undefined, [A1, A1], true), { found: [], missing: [A1] });
  });
});

describe('revisionsDiff (_revs_diff)', () => {
  it('known revisions, leaves or not, are not missing', () => {
    assert.deepEqual(revisionsDiff(TREE, [A1, B2, C2]), { missing: [], possibleAncestors: [] });
  });
  it('possible ancestors are the leaves older than a missing revision, in CouchDB order', () => {
    assert.deepEqual(revisionsDiff(TREE, [r(3, 'f'), A1, r(3, 'f')]), { missing: [r(3, 'f')], possibleAncestors: [C2, E2] });
    assert.deepEqual(revisionsDiff(TREE, [r(4, '0')]).possibleAncestors, [C2, E2, D3]);
    assert.deepEqual(revisionsDiff(TREE, [r(2, '0')]).possibleAncestors, []);
  });
  it('an unknown document misses everything and has no ancestors', () => {
    assert.deepEqual(revisionsDiff(undefined, [A1, B2]), { missing: [A1, B2], possibleAncestors: [] });
  });
});

describe('describeRevision and leavesFrom', () => {
  it('describes a leaf as StoredRevision does', () => {
    assert.deepEqual(describeRevision(TREE, D3), {
      deleted: false,
      revisionPath: ['d'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)],
      revisionStart: 3,
      conflicts: [E2],
      deletedConflicts: [C2],
    });
    assert.equal(describeRevision(TREE, C2).deleted, true);
  });
  it('lists the leaves below a revision', () => {
    assert.deepEqual(leavesFrom(TREE, B2), [D3]);
    assert.deepEqual(leavesFrom(TREE, E2), [E2]);
    assert.deepEqual(leavesFrom(TREE, r(7, '7')), []);
  });
});
