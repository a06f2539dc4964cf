import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { leavesOf, sortedLeaves, stem, winningRevision, type RevisionTree } from '../../../src/revisions/revision-tree.js';
import { TreeEditor } from '../../../src/revisions/tree-editor.js';

/** A replicated path of `length` revisions ending at generation `top`, on branch `letter`, from `1-r`. */
function branch(letter: string, top: number, fromRoot = true): string[] {
  const path = Array.from({ length: top - 1 }, (_, i) => `${top - i}-${letter}${top - i}`);
  return fromRoot ? [...path, '1-r'] : path;
}

/** The definition of stemming: walk `limit` steps up from every leaf, keep what was walked. */
function stemByWalking(tree: RevisionTree, limit: number): RevisionTree {
  const keep = new Set<string>();
  for (const leaf of leavesOf(tree)) {
    let current: string | null = leaf;
    for (let depth = 0; current !== null && depth < limit && Object.hasOwn(tree, current); depth++) {
      keep.add(current);
      current = tree[current].parent;
    }
  }
  const stemmed: RevisionTree = {};
  for (const rev of keep) stemmed[rev] = { parent: tree[rev].parent !== null && keep.has(tree[rev].parent!) ? tree[rev].parent : null, deleted: tree[rev].deleted };
  return stemmed;
}

const paths = fc.array(
  fc.record({ letter: fc.constantFrom('a', 'b', 'c', 'd', 'e'), top: fc.integer({ min: 2, max: 9 }), rooted: fc.boolean(), deleted: fc.boolean() }),
  { minLength: 1, maxLength: 12 },
);

describe('TreeEditor', () => {
  it('keeps leaves, winner and obsolete leaves as a recomputation over the whole tree after every merge', () => {
    fc.assert(
      fc.property(paths, (list) => {
        const editor = new TreeEditor(undefined);
        for (const { letter, top, rooted, deleted } of list) {
          const before = leavesOf(editor.toTree(Number.POSITIVE_INFINITY));
          const outcome = editor.mergePath(branch(letter, top, rooted), deleted);
          assert.ok(outcome.ok);
          const tree = editor.toTree(Number.POSITIVE_INFINITY);
          const after = leavesOf(tree);
          assert.equal(editor.leafCount, after.size);
          assert.equal(editor.winner(), winningRevision(tree));
          assert.deepEqual(new Set(outcome.obsoleteLeaves), new Set([...before].filter((rev) => !after.has(rev))));
        }
      }),
    );
  });

  it('stems as walking the revision limit up from every leaf does', () => {
    fc.assert(
      fc.property(paths, fc.integer({ min: 1, max: 6 }), (list, limit) => {
        const editor = new TreeEditor(undefined);
        for (const { letter, top, rooted, deleted } of list) editor.mergePath(branch(letter, top, rooted), deleted);
        const full = editor.toTree(Number.POSITIVE_INFINITY);
        assert.deepEqual(stem(full, limit), stemByWalking(full, limit));
      }),
    );
  });

  it('merges 4000 conflicting revisions of one document into 4000 leaves, winner first', () => {
    const editor = new TreeEditor(undefined);
    const revs = Array.from({ length: 4000 }, (_, i) => `1-${i.toString(16).padStart(32, '0')}`);
    for (const rev of revs) assert.ok(editor.mergePath([rev], false).ok);
    assert.equal(editor.leafCount, 4000);
    assert.deepEqual(sortedLeaves(editor.toTree())[0], revs.at(-1));
  });

  it('refuses a path that would add a leaf beyond maxLeaves, and never one that extends a leaf', () => {
    const limits = { maxLeaves: 2, maxRevisions: 100 };
    const editor = new TreeEditor(undefined);
    assert.ok(editor.mergePath(branch('a', 2), false, limits).ok);
    assert.ok(editor.mergePath(branch('b', 2), false, limits).ok);
    assert.deepEqual(editor.mergePath(branch('c', 2), false, limits), { ok: false, reason: 'too_many_leaves' });
    assert.equal(editor.leafCount, 2, 'a refused path leaves the tree as it was');
    assert.deepEqual(editor.mergePath(['3-a3', '2-a2'], false, limits), { ok: true, rev: '3-a3', changed: true, obsoleteLeaves: ['2-a2'] });
    assert.equal(editor.mergePath(branch('b', 2), false, limits).ok, true, 'a known revision is a no-op, never refused');
  });

  it('refuses a path that would hold more than maxRevisions revisions', () => {
    const editor = new TreeEditor(undefined);
    assert.ok(editor.mergePath(branch('a', 5), false, { maxLeaves: 10, maxRevisions: 8 }).ok);
    assert.deepEqual(editor.mergePath(branch('b', 5), false, { maxLeaves: 10, maxRevisions: 8 }), { ok: false, reason: 'too_many_revisions' });
    assert.ok(editor.mergePath(branch('b', 5), false, { maxLeaves: 10, maxRevisions: 9 }).ok, 'the shared root is not counted twice');
  });

  it('new_edits=true edits see the leaves of earlier edits of the same batch', () => {
    const editor = new TreeEditor(undefined);
    const created = editor.applyEdit({ body: { v: 1 }, deleted: false });
    assert.ok(created.ok);
    assert.deepEqual(editor.applyEdit({ body: { v: 2 }, deleted: false }), { ok: false, reason: 'conflict' });
    const updated = editor.applyEdit({ body: { v: 2 }, deleted: false, baseRev: created.rev });
    assert.ok(updated.ok);
    assert.deepEqual(updated.obsoleteLeaves, [created.rev]);
    assert.equal(editor.winner(), updated.rev);
    assert.equal(editor.leafCount, 1);
  });
});
