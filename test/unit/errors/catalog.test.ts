import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import ts from 'typescript';
import * as attachmentErrors from '../../../src/errors/attachment-errors.js';
import * as catalog from '../../../src/errors/catalog.js';
import * as jwtErrors from '../../../src/errors/jwt-errors.js';
import * as queryErrors from '../../../src/errors/query-errors.js';
import { CouchError } from '../../../src/errors/couch-error.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
const CATALOG_MODULES = { catalog, attachmentErrors, jwtErrors, queryErrors };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every string the sources can produce: plain literals as themselves, templates as patterns with wildcards. */
function sourceStrings(): { literals: string[]; templates: string[][] } {
  const literals: string[] = [];
  const templates: string[][] = [];
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literals.push(node.text);
      if (ts.isTemplateExpression(node)) {
        const parts = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)];
        // A template of mostly substitutions (`${a}: ${b}`) says nothing about a reason's words.
        if (parts.join('').length >= 6) templates.push(parts);
      }
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true));
  }
  return { literals, templates };
}

/** The rows of the table in docs/errors.md: status, error and the reasons written as code spans. */
function documentedRows(): { status: number; error: string; reasons: string[]; line: string }[] {
  return DOC.split('\n')
    .filter((line) => /^\| \d{3} \| /.test(line))
    .map((line) => {
      const [status, error, reasons] = line.split(' | ').map((cell) => cell.trim());
      return { status: Number(status!.replace('| ', '')), error: error!, reasons: [...reasons!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!), line };
    });
}

test('every fixed error of the catalog is listed in docs/errors.md with its status, error and reason', () => {
  let checked = 0;
  for (const [moduleName, module] of Object.entries(CATALOG_MODULES)) {
    for (const [name, make] of Object.entries(module)) {
      if (typeof make !== 'function' || make.length > 0) continue;
      const error = (make as () => CouchError)();
      assert.ok(error instanceof CouchError, `${moduleName}.${name}`);
      const row = DOC.split('\n').find((line) => line.startsWith(`| ${error.status} | ${error.error} |`) && line.includes(error.reason));
      assert.ok(row, `${moduleName}.${name}: ${error.status} ${error.error} "${error.reason}" is not in docs/errors.md`);
      checked++;
    }
  }
  assert.ok(checked >= 40, `only ${checked} catalog entries checked`);
});

test('every error docs/errors.md lists is one the code can answer with', () => {
  const { literals, templates } = sourceStrings();
  const patterns = templates.map((parts) => new RegExp(`^${parts.map(escapeRegExp).join('.*')}`));
  const produced = (text: string): boolean =>
    literals.some((literal) => literal.includes(text)) || templates.some((parts) => parts[0]!.length >= 6 && parts[0]!.startsWith(text)) || patterns.some((pattern) => pattern.test(text));
  let checked = 0;
  for (const row of documentedRows()) {
    assert.ok(literals.includes(row.error), `docs/errors.md lists the error "${row.error}" that no source file names`);
    for (const reason of row.reasons) {
      // A placeholder (`<key>`, `…`) stands for a value: the text before it must be what the code writes.
      const literal = reason.split(/['"]?<[^>]*>|['"]?…/)[0]!.trimEnd();
      if (literal.length < 6) continue;
      assert.ok(produced(literal), `docs/errors.md: "${reason}" (${row.status} ${row.error}) is not in the code`);
      checked++;
    }
  }
  assert.ok(checked >= 60, `only ${checked} documented reasons checked`);
});

test('error bodies serialise error before reason', () => {
  assert.equal(JSON.stringify(catalog.conflict()), '{"error":"conflict","reason":"Document update conflict."}');
});
