import type { JsonObject } from '../../../src/json/json.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  isValidRevisionPath,
  listConflicts,
  revisionHash,
  revisionPath,
  sortedLeaves,
  stem,
  winningRevision,
  type RevisionTree,
} from '../../../src/revisions/revision-tree.js';
import { applyEdit, mergePath, type NewEdit } from '../../../src/revisions/tree-editor.js';

const REV = /^[1-9][0-9]*-[0-9a-f]{32}$/;

/** Builds a tree from `rev <- parent` lines; a trailing `x` marks a tombstone. */
function tree(spec: string): RevisionTree {
  const t: RevisionTree = {};
  for (const line of spec.split(/\s*;\s*/).filter((l) => l !== '')) {
    const [rev, parent = '', flag = ''] = line.split(/\s+/);
    t[rev] = { parent: parent === '-' || parent === '' ? null : parent, deleted: flag === 'x' };
  }
  return t;
}

function mustApply(t: RevisionTree | undefined, edit: NewEdit) {
  const result = applyEdit(t, edit);
  assert.ok(result.ok, 'expected the edit to be accepted');
  return result;
}

describe('isValidRevisionPath', () => {
  const cases: [string[], boolean][] = [
    [['3-c', '2-b', '1-a'], true],
    [['5-e'], true],
    [[], false],
    [['3-c', '1-a'], false],
    [['1-a', '2-b'], false],
    [['3-c', 'x'], false],
    [['2-x', '1-'], true], // any id text, as CouchDB
    [['1-a', '0-b'], false], // generation 0 is for _local revisions only
    [['0-a'], false],
  ];
  for (const [path, expected] of cases) {
    it(`${JSON.stringify(path)} → ${expected}`, () => assert.equal(isValidRevisionPath(path), expected));
  }
});

describe('revisionHash', () => {
  // Revisions a CouchDB 3.5.0 gave the same edits (PUT, PUT with ?rev, inline attachments, DELETE).
  const couchdb: [string, boolean, string | null, JsonObject, string][] = [
    ['a new empty document', false, null, {}, '967a00dff5e02add41819138abb3284d'],
    ['a new document', false, null, { a: 1 }, '23202479633c2b380f79507a776743d5'],
    [
      'an update with strings, floats, big integers and atoms',
      false,
      '1-23202479633c2b380f79507a776743d5',
      { a: 2, s: 'é', f: 1.5, n: null, arr: [true, false, -5, 70000, 2 ** 40] },
      'dbba1222b33782f62997c3bc43409bf1',
    ],
    [
      'a document with two attachments',
      false,
      null,
      {
        x: 'y',
        _attachments: {
          'b.txt': { content_type: 'text/plain', digest: 'md5-iMaiC8wqiFlD2NjLTemvCQ==', length: 5, revpos: 1, stub: true },
          'a.bin': { content_type: 'application/octet-stream', digest: 'md5-uV9n9h67A2GWIteY9F/C0w==', length: 3, revpos: 1, stub: true },
        },
      },
      '3eb5d2cb4c77c35a9f672ca029918c21',
    ],
    ['a deletion', true, '1-3eb5d2cb4c77c35a9f672ca029918c21', {}, '91f7fe4dee43992b921b4e9b1b3792f2'],
  ];
  for (const [what, deleted, previous, body, expected] of couchdb) {
    it(`equals CouchDB's new_revid for ${what}`, () => assert.equal(revisionHash(deleted, previous, body), expected));
  }
  const base = revisionHash(false, '1-abc', { a: 1 });
  it('depends on the order of the members, as CouchDB\'s (the body is hashed as its Erlang term)', () => {
    assert.notEqual(revisionHash(false, '1-abc', { b: 1, a: 1 }), revisionHash(false, '1-abc', { a: 1, b: 1 }));
  });
  it('is 32 lowercase hex digits and deterministic', () => {
    assert.match(base, /^[0-9a-f]{32}$/);
    assert.equal(revisionHash(false, '1-abc', { a: 1 }), base);
  });
  const variants: [string, string][] = [
    ['deleted flag', revisionHash(true, '1-abc', { a: 1 })],
    ['previous revision', revisionHash(false, '1-abd', { a: 1 })],
    ['no previous revision', revisionHash(false, null, { a: 1 })],
    ['body', revisionHash(false, '1-abc', { a: 2 })],
  ];
  for (const [what, hash] of variants) {
    it(`changes with the ${what}`, () => assert.notEqual(hash, base));
  }
});

describe('winner, leaves and conflicts', () => {
  const cases: { name: string; tree: string; winner: string; conflicts: string[]; deleted: string[] }[] = [
    { name: 'single revision', tree: '1-a', winner: '1-a', conflicts: [], deleted: [] },
    { name: 'linear history', tree: '1-a; 2-b 1-a; 3-c 2-b', winner: '3-c', conflicts: [], deleted: [] },
    {
      name: 'same generation: highest hash wins',
      tree: '1-a; 2-b 1-a; 2-c 1-a',
      winner: '2-c',
      conflicts: ['2-b'],
      deleted: [],
    },
    {
      name: 'higher generation beats higher hash',
      tree: '1-a; 2-f 1-a; 2-b 1-a; 3-c 2-b',
      winner: '3-c',
      conflicts: ['2-f'],
      deleted: [],
    },
    {
      name: 'live leaf beats a longer deleted one',
      tree: '1-a; 2-b 1-a; 2-c 1-a; 3-d 2-c x',
      winner: '2-b',
      conflicts: [],
      deleted: ['3-d'],
    },
    {
      name: 'every leaf deleted: highest deleted wins',
      tree: '1-a; 2-b 1-a x; 2-c 1-a x',
      winner: '2-c',
      conflicts: [],
      deleted: ['2-b'],
    },
    {
      name: 'conflicts in winner order',
      tree: '1-a; 2-b 1-a; 2-e 1-a; 2-c 1-a; 3-d 2-c; 2-f 1-a x; 2-g 1-a x',
      winner: '3-d',
      conflicts: ['2-e', '2-b'],
      deleted: ['2-g', '2-f'],
    },
    {
      name: 'disconnected roots (stemmed or partial paths)',
      tree: '4-a; 5-b 4-a; 2-z',
      winner: '5-b',
      conflicts: ['2-z'],
      deleted: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const t = tree(c.tree);
      assert.equal(winningRevision(t), c.winner);
      assert.deepEqual(listConflicts(t), { conflicts: c.conflicts, deletedConflicts: c.deleted });
      assert.deepEqual(sortedLeaves(t), [c.winner, ...c.conflicts, ...c.deleted]);
    });
  }
  it('an empty tree has no winner', () => assert.equal(winningRevision({}), undefined));
});

describe('revisionPath', () => {
  const t = tree('1-a; 2-b 1-a; 3-c 2-b; 2-d 1-a');
  const cases: [string, string[]][] = [
    ['3-c', ['3-c', '2-b', '1-a']],
    ['2-d', ['2-d', '1-a']],
    ['1-a', ['1-a']],
    ['9-z', []],
  ];
  for (const [rev, expected] of cases) {
    it(rev, () => assert.deepEqual(revisionPath(t, rev), expected));
  }
});

describe('applyEdit (new_edits=true)', () => {
  const live = tree('1-a; 2-b 1-a; 2-c 1-a x; 3-d 2-b');
  const allDeleted = tree('1-a; 2-b 1-a x; 2-c 1-a x');
  const body = { v: 1 };
  const cases: { name: string; tree: RevisionTree | undefined; edit: NewEdit; parent: string | null | 'conflict' }[] = [
    { name: 'create', tree: undefined, edit: { body, deleted: false }, parent: null },
    { name: 'create in an empty tree', tree: {}, edit: { body, deleted: false }, parent: null },
    { name: 'rev on a missing document', tree: undefined, edit: { body, deleted: false, baseRev: '1-a' }, parent: 'conflict' },
    { name: 'delete a missing document creates a tombstone root (CouchDB)', tree: undefined, edit: { body: {}, deleted: true }, parent: null },
    { name: 'edit the winner', tree: live, edit: { body, deleted: false, baseRev: '3-d' }, parent: '3-d' },
    { name: 'edit a deleted leaf of a live document', tree: live, edit: { body, deleted: false, baseRev: '2-c' }, parent: '2-c' },
    { name: 'stale rev', tree: live, edit: { body, deleted: false, baseRev: '2-b' }, parent: 'conflict' },
    { name: 'unknown rev', tree: live, edit: { body, deleted: false, baseRev: '3-e' }, parent: 'conflict' },
    { name: 'no rev on a live document', tree: live, edit: { body, deleted: false }, parent: 'conflict' },
    { name: 'delete the winner', tree: live, edit: { body: {}, deleted: true, baseRev: '3-d' }, parent: '3-d' },
    { name: 'delete without rev', tree: live, edit: { body: {}, deleted: true }, parent: 'conflict' },
    { name: 'recreate a deleted document', tree: allDeleted, edit: { body, deleted: false }, parent: '2-c' },
    { name: 'recreate from a losing tombstone', tree: allDeleted, edit: { body, deleted: false, baseRev: '2-b' }, parent: '2-b' },
    { name: 'delete a deleted document without rev extends the tombstone (CouchDB)', tree: allDeleted, edit: { body: {}, deleted: true }, parent: '2-c' },
    { name: 'rev of an ancestor of a deleted document', tree: allDeleted, edit: { body, deleted: false, baseRev: '1-a' }, parent: 'conflict' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = applyEdit(c.tree, c.edit);
      if (c.parent === 'conflict') {
        assert.deepEqual(result, { ok: false, reason: 'conflict' });
        return;
      }
      assert.ok(result.ok);
      const generation = c.parent === null ? 1 : Number(c.parent.split('-')[0]) + 1;
      assert.match(result.rev, REV);
      assert.equal(result.rev, `${generation}-${revisionHash(c.edit.deleted, c.parent, c.edit.body)}`);
      assert.deepEqual(result.tree[result.rev], { parent: c.parent, deleted: c.edit.deleted });
      assert.deepEqual(result.obsoleteLeaves, c.parent === null ? [] : [c.parent]);
      assert.equal(result.changed, true);
    });
  }

  it('does not modify the tree it was given', () => {
    const before = JSON.stringify(live);
    mustApply(live, { body, deleted: false, baseRev: '3-d' });
    assert.equal(JSON.stringify(live), before);
  });

  it('editing a losing branch keeps both branches', () => {
    const t = tree('1-a; 2-b 1-a; 2-c 1-a');
    const result = mustApply(t, { body, deleted: false, baseRev: '2-b' });
    assert.equal(winningRevision(result.tree), result.rev);
    assert.deepEqual(listConflicts(result.tree).conflicts, ['2-c']);
  });

  it('deleting the winner of a conflicted document makes the other branch win', () => {
    const t = tree('1-a; 2-b 1-a; 2-c 1-a');
    const result = mustApply(t, { body: {}, deleted: true, baseRev: '2-c' });
    assert.equal(winningRevision(result.tree), '2-b');
    assert.deepEqual(listConflicts(result.tree), { conflicts: [], deletedConflicts: [result.rev] });
  });

  it('stems to the revision limit', () => {
    let t: RevisionTree | undefined;
    let rev = '';
    for (let i = 0; i < 6; i++) {
      const result = applyEdit(t, { body: { i }, deleted: false, baseRev: t === undefined ? undefined : rev }, 4);
      assert.ok(result.ok);
      t = result.tree;
      rev = result.rev;
    }
    assert.equal(Object.keys(t ?? {}).length, 4);
    assert.equal(revisionPath(t ?? {}, rev).length, 4);
    assert.ok(rev.startsWith('6-'));
  });
});

describe('mergePath (new_edits=false)', () => {
  it('creates the whole path on a missing document', () => {
    const result = mergePath(undefined, ['3-c', '2-b', '1-a'], false);
    assert.ok(result.ok);
    assert.deepEqual(result.tree, tree('1-a; 2-b 1-a; 3-c 2-b'));
    assert.equal(result.rev, '3-c');
    assert.equal(result.changed, true);
  });

  const cases: {
    name: string;
    tree: string;
    path: string[];
    deleted?: boolean;
    changed: boolean;
    obsolete: string[];
    winner: string;
    conflicts: string[];
  }[] = [
    { name: 'extends a leaf', tree: '1-a; 2-b 1-a', path: ['3-c', '2-b'], changed: true, obsolete: ['2-b'], winner: '3-c', conflicts: [] },
    { name: 'adds a branch: a conflict, never an error', tree: '1-a; 2-b 1-a', path: ['2-c', '1-a'], changed: true, obsolete: [], winner: '2-c', conflicts: ['2-b'] },
    { name: 'an existing leaf is a no-op', tree: '1-a; 2-b 1-a', path: ['2-b', '1-a'], changed: false, obsolete: [], winner: '2-b', conflicts: [] },
    { name: 'an existing ancestor is a no-op', tree: '1-a; 2-b 1-a; 3-c 2-b', path: ['2-b', '1-a'], changed: false, obsolete: [], winner: '3-c', conflicts: [] },
    { name: 'fills missing ancestors along the path', tree: '1-a', path: ['4-d', '3-c', '2-b', '1-a'], changed: true, obsolete: ['1-a'], winner: '4-d', conflicts: [] },
    { name: 'a path with no known revision starts a new root', tree: '1-a; 2-b 1-a', path: ['3-d', '2-c'], changed: true, obsolete: [], winner: '3-d', conflicts: ['2-b'] },
    { name: 'a deleted revision does not win over a live one', tree: '1-a; 2-b 1-a', path: ['3-z', '2-y', '1-a'], deleted: true, changed: true, obsolete: [], winner: '2-b', conflicts: [] },
    { name: 'extends a tombstone', tree: '1-a; 2-b 1-a x', path: ['3-c', '2-b'], changed: true, obsolete: ['2-b'], winner: '3-c', conflicts: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const t = tree(c.tree);
      const result = mergePath(t, c.path, c.deleted ?? false);
      assert.ok(result.ok);
      assert.equal(result.rev, c.path[0]);
      assert.equal(result.changed, c.changed);
      assert.deepEqual(result.obsoleteLeaves, c.obsolete);
      assert.equal(winningRevision(result.tree), c.winner);
      assert.deepEqual(listConflicts(result.tree).conflicts, c.conflicts);
      for (let i = 0; i + 1 < c.path.length; i++) {
        assert.equal(result.tree[c.path[i]].parent, c.path[i + 1], `parent of ${c.path[i]}`);
      }
      assert.equal(result.tree[c.path[0]].deleted, c.deleted === true || t[c.path[0]]?.deleted === true);
    });
  }

  it('re-attaches a stemmed root when a path knows its parent', () => {
    const result = mergePath(tree('2-b; 3-c 2-b'), ['4-d', '3-x', '2-b', '1-a'], false);
    assert.ok(result.ok);
    assert.equal(result.tree['2-b'].parent, '1-a');
    assert.deepEqual(revisionPath(result.tree, '3-c'), ['3-c', '2-b', '1-a']);
  });

  it('stems long paths to the limit', () => {
    const path = Array.from({ length: 10 }, (_, i) => `${10 - i}-h${10 - i}`);
    const result = mergePath(undefined, path, false, 3);
    assert.ok(result.ok);
    assert.deepEqual(Object.keys(result.tree).sort(), ['10-h10', '8-h8', '9-h9']);
    assert.equal(result.tree['8-h8'].parent, null);
  });

  it('refuses an invalid path', () => {
    assert.throws(() => mergePath(undefined, ['3-c', '1-a'], false), TypeError);
  });

  it('gives the same tree whatever order the branches arrive in', () => {
    const branch = fc.tuple(fc.integer({ min: 1, max: 4 }), fc.constantFrom('a', 'b', 'c', 'd'));
    fc.assert(
      fc.property(fc.array(branch, { minLength: 1, maxLength: 6 }), fc.infiniteStream(fc.nat()), (branches, seeds) => {
        // Every branch hangs off 1-r; a rev names one content, so its deleted flag is a function
        // of the rev, as with real hashes.
        const paths = branches.map(([length, letter]) => ({
          path: [
            ...Array.from({ length }, (_, i) => `${length + 1 - i}-${letter}${length + 1 - i}`),
            '1-r',
          ],
          deleted: letter >= 'c' && length % 2 === 1,
        }));
        const merge = (list: typeof paths): RevisionTree => {
          let t: RevisionTree | undefined;
          for (const p of list) {
            const result = mergePath(t, p.path, p.deleted);
            assert.ok(result.ok);
            t = result.tree;
          }
          return t ?? {};
        };
        const shuffled = [...paths];
        const it = seeds[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
        }
        const a = merge(paths);
        const b = merge(shuffled);
        assert.equal(winningRevision(a), winningRevision(b));
        assert.deepEqual(sortedLeaves(a), sortedLeaves(b));
      }),
    );
  });
});

describe('stem', () => {
  it('keeps every revision within the limit of some leaf', () => {
    const t = tree('1-a; 2-b 1-a; 3-c 2-b; 4-d 3-c; 2-x 1-a');
    assert.deepEqual(stem(t, 2), tree('3-c; 4-d 3-c; 1-a; 2-x 1-a'));
  });
  it('returns the same tree when nothing is too deep', () => {
    const t = tree('1-a; 2-b 1-a');
    assert.equal(stem(t, 2), t);
  });
});
