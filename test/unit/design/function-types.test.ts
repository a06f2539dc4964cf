import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { functionsOf } from '../../../src/design/design-check.js';
import { DESIGN_FUNCTION_TYPES } from '../../../src/design/registry.js';
import { nouveauProblem } from '../../../src/design/function-types/nouveau.js';

/** A design document with one JavaScript function of every kind the registry knows, and decoys. */
const DDOC = {
  _id: '_design/app',
  validate_doc_update: 'function (doc) {}',
  filters: { mine: 'function (doc, req) { return true; }', broken: 42 },
  views: { byType: { map: 'function (doc) { emit(doc.type); }', reduce: '_count' }, total: { map: 'function (doc) {}', reduce: 'function (k, v) { return sum(v); }' } },
  shows: { page: 'function (doc, req) {}' },
  nouveau: { books: { index: "function (doc) { index('text', 'title', doc.title); }", default_analyzer: 'english' }, nothing: {} },
};

describe('design-function types', () => {
  test('the design check compiles exactly the functions of the registered types, in registry order', () => {
    assert.deepEqual(
      functionsOf(DDOC).map((each) => each.path.join('.')),
      ['validate_doc_update', 'filters.mine', 'views.byType.map', 'views.total.map', 'views.total.reduce', 'nouveau.books.index'],
    );
    assert.deepEqual(DESIGN_FUNCTION_TYPES.map((type) => type.member), ['validate_doc_update', 'filters', 'views', 'shows', 'lists', 'updates', 'nouveau']);
  });

  test('show, list and update functions are compiled when called, not on save (as CouchDB)', () => {
    const withRenderers = { ...DDOC, shows: { page: 'function (' }, lists: { csv: 'function (head' }, updates: { stamp: 'not even JavaScript' } };
    assert.deepEqual(functionsOf(withRenderers).map((each) => each.path.join('.')), functionsOf(DDOC).map((each) => each.path.join('.')));
  });

  test('a failing show or update maps to render.js\'s errors', () => {
    const updates = DESIGN_FUNCTION_TYPES.find((type) => type.member === 'updates')!;
    const thrown = updates.errorOf!({ ok: false, kind: 'thrown', error: { error: 'TypeError', message: 'x is null' }, logs: [] });
    assert.deepEqual([thrown.status, thrown.error, thrown.reason], [500, 'render_error', 'function raised error: TypeError: x is null']);
    const named = updates.errorOf!({ ok: false, kind: 'thrown', error: ['error', 'not_found', 'document not found'], logs: [] });
    assert.deepEqual([named.status, named.error, named.reason], [404, 'not_found', 'document not found']);
  });

  test('each function carries CouchDB\'s compilation-error prefix', () => {
    const prefixes = Object.fromEntries(functionsOf(DDOC).map((each) => [each.path.join('.'), each.prefix]));
    assert.equal(prefixes['filters.mine'], "Compilation of the filter function 'mine' failed: ");
    assert.equal(prefixes['views.total.reduce'], "Compilation of the reduce function in the 'total' view failed: ");
  });

  test('a nouveau member that cannot define an index is named, as CouchDB names it when queried', () => {
    assert.equal(nouveauProblem(DDOC), 'index `nothing` must have parameter `index`');
    assert.equal(nouveauProblem({ nouveau: { a: { index: 'function (doc) {}', default_analyzer: 'klingon' } } }), 'index `a`: default_analyzer: unknown analyzer "klingon"');
    assert.equal(nouveauProblem({ nouveau: { a: { index: 'function (doc) {}', field_analyzers: { t: 3 } } } }), 'index `a`: field_analyzers.t must be a string');
    assert.equal(nouveauProblem({ nouveau: [] }), '`nouveau` must be an object');
    assert.equal(nouveauProblem({ nouveau: { a: { index: 'function (doc) {}', default_analyzer: 'german', field_analyzers: { id: 'keyword' } } } }), undefined);
  });

  test('a design document in another language is not checked', () => {
    assert.deepEqual(functionsOf({ ...DDOC, language: 'erlang' }), []);
  });

  test('a failed call maps to CouchDB\'s error of its type', () => {
    const byMember = new Map(DESIGN_FUNCTION_TYPES.map((type) => [type.member, type]));
    const forbidden = byMember.get('validate_doc_update')!.errorOf!({ ok: false, kind: 'thrown', error: { forbidden: 'no' }, logs: [] });
    assert.deepEqual([forbidden.status, forbidden.error, forbidden.reason], [403, 'forbidden', 'no']);
    const timedOut = byMember.get('validate_doc_update')!.errorOf!({ ok: false, kind: 'timeout', error: { message: 'slow' }, logs: [] });
    assert.deepEqual([timedOut.status, timedOut.error], [500, 'os_process_error']);
    const thrown = byMember.get('filters')!.errorOf!({ ok: false, kind: 'thrown', error: { error: 'bad_filter', reason: 'nope' }, logs: [] });
    assert.deepEqual([thrown.error, thrown.reason], ['bad_filter', 'nope']);
    assert.equal(byMember.get('views')!.errorOf, undefined);
  });
});
