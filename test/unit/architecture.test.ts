import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { stronglyConnected } from '../support/architecture/folders.js';

/**
 * The layering of docs/architecture.md, checked on the TypeScript sources: no import cycle in src/,
 * routes import neither storage nor each other, handler folders of auth/ never import siblings,
 * users/ never imports databases/ or auth/ (beyond the UserCtx leaf), and files and functions stay small.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 60;

interface Module {
  path: string;
  source: ts.SourceFile;
  imports: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function load(path: string): Module {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const imports: string[] = [];
  source.forEachChild((node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      if (specifier.startsWith('.')) imports.push(relative(SRC, resolve(dirname(path), specifier.replace(/\.js$/, '.ts'))));
    }
  });
  return { path: relative(SRC, path), source, imports };
}

const modules = new Map(sourceFiles(SRC).map((path) => [relative(SRC, path), load(path)]));

/** Groups of modules that import each other through a cycle, and modules that import themselves. */
function cycles(): string[][] {
  const imported = (name: string): string[] => modules.get(name)!.imports.filter((target) => modules.has(target));
  const selfImports = [...modules.keys()].filter((name) => imported(name).includes(name)).map((name) => [name]);
  return [...stronglyConnected(modules.keys(), imported), ...selfImports];
}

function importsMatching(from: (path: string) => boolean, to: (target: string, path: string) => boolean): string[] {
  return [...modules.values()].filter((module) => from(module.path)).flatMap((module) => module.imports.filter((target) => to(target, module.path)).map((target) => `${module.path} -> ${target}`));
}

const folderOf = (path: string): string => dirname(path);

describe('architecture', () => {
  test('the module graph found the sources', () => {
    assert.ok(modules.size > 50, `${modules.size} modules`);
    assert.ok(modules.has('app.ts') && modules.has('http/routes/documents.ts'));
  });

  test('src/ has no import cycle', () => {
    assert.deepEqual(cycles(), []);
  });

  test('routes import neither storage nor other routes', () => {
    const found = importsMatching((path) => path.startsWith('http/routes/'), (target) => target.startsWith('storage/') || target.startsWith('http/routes/'));
    assert.deepEqual(found, []);
  });

  test('only the registry of wiring/storage-backends.ts knows a storage backend', () => {
    const found = importsMatching(
      (path) => path !== 'wiring/storage-backends.ts' && !path.startsWith('storage/sqlite/') && !path.startsWith('storage/postgres/'),
      (target) => target.startsWith('storage/sqlite/') || target.startsWith('storage/postgres/'),
    );
    assert.deepEqual(found, []);
  });

  test('the storage backends never import each other', () => {
    const found = importsMatching(
      (path) => path.startsWith('storage/sqlite/') || path.startsWith('storage/postgres/'),
      (target, path) => (target.startsWith('storage/sqlite/') || target.startsWith('storage/postgres/')) && folderOf(target) !== folderOf(path),
    );
    assert.deepEqual(found, []);
  });

  test('better-sqlite3 is imported by one file, the driver of storage/sqlite/', () => {
    const found = [...modules.values()].filter((module) => /from 'better-sqlite3'/.test(module.source.text)).map((module) => module.path);
    assert.deepEqual(found, ['storage/sqlite/better-sqlite3-driver.ts']);
  });

  test('only the storage backends import the storage kit', () => {
    const found = importsMatching(
      (path) => !path.startsWith('storage/sqlite/') && !path.startsWith('storage/postgres/') && !path.startsWith('storage/kit/'),
      (target) => target.startsWith('storage/kit/'),
    );
    assert.deepEqual(found, []);
  });

  test('revisions/ is a leaf: it imports nothing but json/', () => {
    const found = importsMatching((path) => path.startsWith('revisions/'), (target) => !target.startsWith('revisions/') && !target.startsWith('json/'));
    assert.deepEqual(found, []);
  });

  test('users/ and auth/ never import each other (UserCtx lives in the identity/ leaf), nor users/ the layers above it', () => {
    const found = [
      ...importsMatching((path) => path.startsWith('users/'), (target) => ['auth/', 'databases/', 'http/'].some((layer) => target.startsWith(layer))),
      ...importsMatching((path) => path.startsWith('auth/'), (target) => ['users/', 'databases/', 'http/'].some((layer) => target.startsWith(layer))),
    ];
    assert.deepEqual(found, []);
  });

  test('js/ is the engine only: it imports no design/, changes/, databases/ or http/ module', () => {
    const found = importsMatching((path) => path.startsWith('js/'), (target) => ['design/', 'changes/', 'databases/', 'http/'].some((layer) => target.startsWith(layer)));
    assert.deepEqual(found, []);
  });

  test('design/ and changes/ never import http/ (only its event-loop helper), and design/ never imports changes/', () => {
    const found = [
      ...importsMatching((path) => path.startsWith('design/') || path.startsWith('changes/'), (target) => target.startsWith('http/') && target !== 'http/event-loop.ts'),
      ...importsMatching((path) => path.startsWith('design/'), (target) => target.startsWith('changes/')),
    ];
    assert.deepEqual(found, []);
  });

  test('the design-function types are reached only through design/ (its registry lists them)', () => {
    const found = importsMatching((path) => !path.startsWith('design/'), (target) => target.startsWith('design/function-types/'));
    assert.deepEqual(found, []);
  });

  test('collation/ is a leaf: it imports nothing from src/ but json/', () => {
    const found = importsMatching((path) => path.startsWith('collation/'), (target) => !target.startsWith('collation/') && !target.startsWith('json/'));
    assert.deepEqual(found, []);
    assert.ok(modules.has('collation/compare.ts') && modules.has('collation/encode.ts'));
  });

  test('handler folders of auth/ never import their siblings', () => {
    const handlerFolders = ['auth/basic', 'auth/cookie', 'auth/proxy', 'auth/jwt'];
    const found = importsMatching(
      (path) => handlerFolders.includes(folderOf(path)),
      (target, path) => handlerFolders.includes(folderOf(target)) && folderOf(target) !== folderOf(path),
    );
    assert.deepEqual(found, []);
  });

  test(`no file in src/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = [...modules.values()].map((module) => [module.path, module.source.getLineAndCharacterOfPosition(module.source.end).line] as const).filter(([, lines]) => lines > MAX_FILE_LINES);
    assert.deepEqual(long, []);
  });

  test(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const module of modules.values()) {
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const first = module.source.getLineAndCharacterOfPosition(node.getStart()).line;
          const last = module.source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (last - first + 1 > MAX_FUNCTION_LINES) long.push(`${module.path}:${first + 1} (${last - first + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(module.source);
    }
    assert.deepEqual(long, []);
  });

  test('comments cite documents inside the repository, not the design notes, spec or reference outside it', () => {
    const outside = /\b(DESIGN|spec|reference|requirements)[ .]?(§ ?\d[\d.]*|\d+\.\d[\d.]*)/;
    const found = [...modules.values()].flatMap((module) =>
      module.source.text.split('\n').flatMap((line, index) => (outside.test(line) ? [`${module.path}:${index + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(found, []);
  });
});
