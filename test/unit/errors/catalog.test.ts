import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as catalog from '../../../src/errors/catalog.js';
import { CouchError } from '../../../src/errors/couch-error.js';

const DOC = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'docs', 'errors.md'), 'utf8');

test('every fixed error of the catalog is listed in docs/errors.md with its status, error and reason', () => {
  let checked = 0;
  for (const [name, make] of Object.entries(catalog)) {
    if (typeof make !== 'function' || make.length > 0) continue;
    const error = (make as () => CouchError)();
    assert.ok(error instanceof CouchError, name);
    const row = DOC.split('\n').find((line) => line.startsWith(`| ${error.status} | ${error.error} |`) && line.includes(error.reason));
    assert.ok(row, `${name}: ${error.status} ${error.error} "${error.reason}" is not in docs/errors.md`);
    checked++;
  }
  assert.ok(checked >= 15, `only ${checked} catalog entries checked`);
});

test('error bodies serialise error before reason', () => {
  assert.equal(JSON.stringify(catalog.conflict()), '{"error":"conflict","reason":"Document update conflict."}');
});
