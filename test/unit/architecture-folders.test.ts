import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { unusedExports } from '../support/architecture/exports.js';
import { folderComponents, folderCycles, folderGraph, withoutEdges } from '../support/architecture/folders.js';
import { layerTable, tableMismatches, upwardEdges, upwardImports } from '../support/architecture/layers.js';
import { foldersUnder, readModules } from '../support/architecture/modules.js';
import { KNOWN_FOLDER_CYCLES_TO_REMOVE, KNOWN_UNUSED_EXPORTS_TO_REMOVE, KNOWN_UPWARD_IMPORTS_TO_REMOVE } from './architecture-known.js';

/**
 * The folder-level rules of docs/architecture.md, checked on the sources: the folders of src/ form
 * no import cycle, every import points down the layer table (or stays within a row), the table and
 * the folders name each other, and no exported name of src/ goes unimported. The known exceptions
 * are listed, with their reasons, in architecture-known.ts.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const modules = readModules(ROOT, ['src', 'test', 'bench']);
const graph = folderGraph(modules);
const rows = layerTable(readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8'));
const nodes = [...foldersUnder(ROOT, 'src').filter((folder) => folder !== 'src'), ...[...modules.keys()].filter((path) => /^src\/[^/]+\.ts$/.test(path))].sort();
const knownCycleEdges = KNOWN_FOLDER_CYCLES_TO_REMOVE.map((entry) => entry.edge);
const cyclicEdges = new Set(folderComponents(graph).flatMap((component) => component.flatMap((from) => component.filter((to) => graph.get(from)?.has(to)).map((to) => `${from} -> ${to}`))));

describe('architecture of folders', () => {
  test('the folder graph and the layer table were read', () => {
    assert.ok(nodes.includes('src/http/routes') && nodes.includes('src/app.ts'), nodes.join(', '));
    assert.ok(graph.get('src/http/routes')?.has('src/databases'), 'routes import the database layer');
    assert.ok(rows.length > 10, `${rows.length} rows`);
  });

  test('the folders of src/ import each other through no cycle (beyond the known ones)', () => {
    assert.deepEqual(folderCycles(withoutEdges(graph, knownCycleEdges)), []);
  });

  test('every known folder cycle still exists (remove an entry once its cycle is gone)', () => {
    assert.deepEqual(knownCycleEdges.filter((edge) => !cyclicEdges.has(edge)), []);
  });

  test('every folder of src/ is in exactly one row of the layer table, and every folder it names exists', () => {
    assert.deepEqual(tableMismatches(rows, nodes), []);
  });

  test('every page the layer table links to exists', () => {
    const pages = rows.flatMap((row) => row.pages);
    assert.ok(pages.length > 0);
    assert.deepEqual(pages.filter((page) => !existsSync(join(ROOT, 'docs', page))), []);
  });

  test('every import points down the layer table of docs/architecture.md, or stays within a row', () => {
    assert.deepEqual(upwardImports(rows, graph, [...knownCycleEdges, ...KNOWN_UPWARD_IMPORTS_TO_REMOVE]), []);
  });

  test('every known upward import still exists (remove an entry once it is gone)', () => {
    const upward = new Set(upwardEdges(rows, graph));
    assert.deepEqual(KNOWN_UPWARD_IMPORTS_TO_REMOVE.filter((edge) => !upward.has(edge)), []);
  });

  test('every name src/ exports is imported by another file of src/, test/ or bench/', () => {
    const known = new Set(KNOWN_UNUSED_EXPORTS_TO_REMOVE);
    assert.deepEqual(unusedExports(modules).filter((entry) => !known.has(entry)), []);
  });

  test('every known unused export is still exported and unused (remove an entry once it is fixed)', () => {
    const unused = new Set(unusedExports(modules));
    assert.deepEqual(KNOWN_UNUSED_EXPORTS_TO_REMOVE.filter((entry) => !unused.has(entry)), []);
  });

});
