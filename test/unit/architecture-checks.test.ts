import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { unusedExports } from '../support/architecture/exports.js';
import { folderCycles, folderGraph, withoutEdges } from '../support/architecture/folders.js';
import { layerTable, tableMismatches, upwardImports } from '../support/architecture/layers.js';
import { moduleFacts, type ModuleFacts } from '../support/architecture/modules.js';

/** The checkers of architecture-folders.test.ts, each shown to catch a planted violation in a tiny tree. */
const tree = (files: Record<string, string>): Map<string, ModuleFacts> => new Map(Object.entries(files).map(([path, text]) => [path, moduleFacts(path, text)]));

const TABLE = `# Architecture

## The layers

| layer | folder | job |
|---|---|---|
| top | \`src/app.ts\` | composes ([guide](guide.md#start)) |
| middle | \`src/a/\`, \`src/a/sub/\` | does things, see \`src/c/\` in the job column |
| bottom | \`src/b/\` | leaves |

## Next section
`;

describe('architecture checkers', () => {
  test('moduleFacts reads named, default, namespace, type-only, re-exported and dynamic imports', () => {
    const facts = moduleFacts(
      'src/a/x.ts',
      [
        "import base, { one, two as second } from './y.js';",
        "import type { Shape } from '../b/z.js';",
        "import * as whole from './whole.js';",
        "import * as parts from './parts.js';",
        "export { three } from './y.js';",
        "export * from '../b/all.js';",
        'export const value = parts.alpha + parts.beta;',
        'export default function run(): void { whole(); }',
        'export interface Thing { shape: Shape }',
        "export async function later() { return import('./lazy.js'); }",
        "import { notRelative } from 'node:fs';",
      ].join('\n'),
    );
    assert.deepEqual(facts.exports, ['three', 'value', 'default', 'Thing', 'later']);
    assert.deepEqual(facts.imports, [
      { target: 'src/a/y.ts', names: ['default', 'one', 'two'], reExportsAll: false },
      { target: 'src/b/z.ts', names: ['Shape'], reExportsAll: false },
      { target: 'src/a/whole.ts', names: ['*'], reExportsAll: false },
      { target: 'src/a/parts.ts', names: ['alpha', 'beta'], reExportsAll: false },
      { target: 'src/a/y.ts', names: ['three'], reExportsAll: false },
      { target: 'src/b/all.ts', names: ['*'], reExportsAll: true },
      { target: 'src/a/lazy.ts', names: ['*'], reExportsAll: false },
    ]);
  });

  test('unusedExports names an export no other file imports, following export * and ignoring the file itself', () => {
    const modules = tree({
      'src/a/used.ts': 'export const used = 1; export const unused = 2; export type Kind = string; const local: Kind = "x"; export const selfOnly = local;',
      'src/a/index.ts': "export * from './used.js';",
      'src/b/user.ts': "import { used } from '../a/index.js'; import type { Kind } from '../a/used.js'; export default used as unknown as Kind;",
      'test/b.test.ts': "import run from '../src/b/user.js'; run;",
    });
    assert.deepEqual(unusedExports(modules), ['src/a/used.ts: selfOnly', 'src/a/used.ts: unused']);
  });

  test('folderCycles prints a planted folder cycle as a path with the imports that make it', () => {
    const modules = tree({
      'src/app.ts': "import './a/one.js';",
      'src/a/one.ts': "import { two } from './sub/two.js'; export const one = two;",
      'src/a/sub/two.ts': "import { three } from '../../b/three.js'; export const two = three;",
      'src/b/three.ts': "import { one } from '../a/one.js'; export const three = 3; one;",
    });
    const graph = folderGraph(modules);
    assert.deepEqual(folderCycles(graph), [
      'src/a -> src/a/sub -> src/b -> src/a (src/a/one.ts -> src/a/sub/two.ts; src/a/sub/two.ts -> src/b/three.ts; src/b/three.ts -> src/a/one.ts)',
    ]);
    assert.deepEqual(folderCycles(withoutEdges(graph, ['src/b -> src/a'])), []);
  });

  test('layerTable reads the rows, their folders and linked pages, and refuses a page without the table', () => {
    assert.deepEqual(layerTable(TABLE), [
      { layer: 'top', folders: ['src/app.ts'], pages: ['guide.md'] },
      { layer: 'middle', folders: ['src/a', 'src/a/sub'], pages: [] },
      { layer: 'bottom', folders: ['src/b'], pages: [] },
    ]);
    assert.throws(() => layerTable('# Architecture\n\nno table\n'), /no "## The layers" section/);
  });

  test('tableMismatches names an unlisted folder, a folder in two rows and a listed folder that does not exist', () => {
    const rows = layerTable(TABLE.replace('| leaves |', '| leaves, and `src/a/` again |').replace('`src/b/` |', '`src/b/`, `src/a/` |'));
    assert.deepEqual(tableMismatches(rows, ['src/app.ts', 'src/a', 'src/b', 'src/new']), [
      'src/a is named by the rows "middle" and "bottom"',
      'src/new is in no row of the layers table',
      'src/a/sub is named by the row "middle" but does not exist',
    ]);
  });

  test('upwardImports names each import that points up the table, and allows imports within a row', () => {
    const modules = tree({
      'src/app.ts': "import './a/one.js'; import './b/leaf.js';",
      'src/a/one.ts': "import './sub/two.js'; import '../b/leaf.js';",
      'src/a/sub/two.ts': "import '../one.js';",
      'src/b/leaf.ts': "import '../a/one.js';",
    });
    const graph = folderGraph(modules);
    assert.deepEqual(upwardImports(layerTable(TABLE), graph), ['src/b/leaf.ts -> src/a/one.ts: bottom (row 3) imports middle (row 2)']);
    assert.deepEqual(upwardImports(layerTable(TABLE), graph, ['src/b -> src/a']), []);
  });
});
