// The console's show and update requests (static/console/design-call.js), imported in Node: what
// was typed → method, path and body; an answer's bytes → the text the page may show, or its size.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

const DIR = new URL('../../../static/console/', import.meta.url);
const load = async <T>(name: string): Promise<T> => (await import(new URL(name, DIR).href)) as T;

type CallRequest = { ok: true; method: string; path: string; body?: { contentType: string; text: string } } | { ok: false; field: string; error: string };
const call = await load<{
  functionPath(db: string, ddoc: string, kind: 'show' | 'update', name: string, id?: string): string;
  showRequest(target: { db: string; ddoc: string; name: string }, id: string): CallRequest;
  updateRequest(target: { db: string; ddoc: string; name: string }, input: { id: string; type: string; body: string }): CallRequest;
  answerBody(contentType: string | undefined, bytes: Uint8Array): { text: string } | { binary: string };
  answerSummary(request: { method: string; path: string }, status: number, json: unknown): string;
  isHtml(contentType: string | undefined): boolean;
  functionNames(ddoc: Record<string, unknown>, kind: 'show' | 'update'): string[];
}>('design-call.js');
const app = await load<{ route(hash: string): { segments: string[]; nav: string; page: unknown } }>('app.js');
const page = await load<{ functionHash(db: string, ddoc: string, kind: string, name: string): string }>('design-function.js');

const TARGET = { db: 'my db', ddoc: 'app', name: 'stamp' };
const bytes = (text: string) => new TextEncoder().encode(text);

describe('console: show and update requests', () => {
  test('functionPath encodes each segment; a design document id keeps its slash', () => {
    assert.equal(call.functionPath('my db', 'a/b', 'show', 'p q'), '/my%20db/_design/a%2Fb/_show/p%20q');
    assert.equal(call.functionPath('db', 'app', 'show', 'page', 'x/y?z'), '/db/_design/app/_show/page/x%2Fy%3Fz');
    assert.equal(call.functionPath('db', 'app', 'show', 'page', '_design/other'), '/db/_design/app/_show/page/_design/other');
    assert.equal(call.functionPath('db', 'app', 'update', 'u', ''), '/db/_design/app/_update/u');
  });

  test('a show is a GET, with the document id when one is typed', () => {
    assert.deepEqual(call.showRequest(TARGET, '  '), { ok: true, method: 'GET', path: '/my%20db/_design/app/_show/stamp' });
    assert.deepEqual(call.showRequest(TARGET, ' ann '), { ok: true, method: 'GET', path: '/my%20db/_design/app/_show/stamp/ann' });
  });

  test('an update is a POST without an id and a PUT with one; the body goes as typed with its content type', () => {
    assert.deepEqual(call.updateRequest(TARGET, { id: '', type: 'form', body: '' }), { ok: true, method: 'POST', path: '/my%20db/_design/app/_update/stamp' });
    assert.deepEqual(call.updateRequest(TARGET, { id: 'ann', type: 'form', body: 'by=me&x=1' }), {
      ok: true,
      method: 'PUT',
      path: '/my%20db/_design/app/_update/stamp/ann',
      body: { contentType: 'application/x-www-form-urlencoded', text: 'by=me&x=1' },
    });
    assert.deepEqual(call.updateRequest(TARGET, { id: '', type: 'json', body: ' {"by": "me"} ' }), {
      ok: true,
      method: 'POST',
      path: '/my%20db/_design/app/_update/stamp',
      body: { contentType: 'application/json', text: ' {"by": "me"} ' },
    });
  });

  test('an update body that is not JSON, or an unknown body type, names the field to fix', () => {
    const bad = call.updateRequest(TARGET, { id: '', type: 'json', body: '{"by": ' });
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.field, 'body');
    assert.match(!bad.ok ? bad.error : '', /^The body is not valid JSON: /);
    const odd = call.updateRequest(TARGET, { id: '', type: 'xml', body: '<a/>' });
    assert.equal(!odd.ok && odd.field, 'body type');
  });

  test('answerBody: text of textual types in their charset; other types and undecodable bytes only by size', () => {
    assert.deepEqual(call.answerBody('text/html; charset=utf-8', bytes('<b>é</b>')), { text: '<b>é</b>' });
    assert.deepEqual(call.answerBody('application/json', bytes('{"a":1}')), { text: '{"a":1}' });
    assert.deepEqual(call.answerBody('application/vnd.api+json', bytes('{}')), { text: '{}' });
    assert.deepEqual(call.answerBody('text/plain; charset=iso-8859-1', new Uint8Array([0x63, 0x61, 0x66, 0xe9])), { text: 'café' });
    assert.deepEqual(call.answerBody(undefined, bytes('plain')), { text: 'plain' });
    assert.deepEqual(call.answerBody('image/png', new Uint8Array([137, 80, 78, 71])), { binary: '4 bytes of image/png, not shown as text.' });
    assert.deepEqual(call.answerBody('text/plain', new Uint8Array([0xff])), { binary: '1 byte that are not utf-8 text, not shown.' });
    assert.deepEqual(call.answerBody('image/png', new Uint8Array(0)), { text: '' });
  });

  test('answerSummary: the request and status, and CouchDB\'s error and reason of an error answer', () => {
    const request = { method: 'POST', path: '/db/_design/app/_update/u' };
    assert.equal(call.answerSummary(request, 201, undefined), 'POST /db/_design/app/_update/u answered 201.');
    assert.equal(call.answerSummary(request, 403, { error: 'forbidden', reason: 'no' }), 'POST /db/_design/app/_update/u answered 403 forbidden: no.');
    assert.equal(call.answerSummary(request, 404, { error: 'not_found', reason: '' }), 'POST /db/_design/app/_update/u answered 404 not_found.');
    assert.equal(call.answerSummary(request, 500, ['not', 'an', 'error']), 'POST /db/_design/app/_update/u answered 500.');
  });

  test('isHtml: HTML and XHTML get a sandboxed preview, nothing else', () => {
    assert.equal(call.isHtml('text/html; charset=utf-8'), true);
    assert.equal(call.isHtml('application/xhtml+xml'), true);
    assert.equal(call.isHtml('text/htmlx'), false);
    assert.equal(call.isHtml('text/plain'), false);
    assert.equal(call.isHtml(undefined), false);
  });

  test('functionNames: the string members of shows or updates, sorted; anything else is none', () => {
    assert.deepEqual(call.functionNames({ shows: { b: 'f', a: 'g', n: 1 } }, 'show'), ['a', 'b']);
    assert.deepEqual(call.functionNames({ shows: { a: 'f' } }, 'update'), []);
    assert.deepEqual(call.functionNames({ updates: ['f'] }, 'update'), []);
    assert.deepEqual(call.functionNames({ updates: null }, 'update'), []);
  });

  test('a function\'s page has its own address, routed with its decoded segments', () => {
    const hash = page.functionHash('my db', 'a/b', 'update', 'st amp');
    assert.equal(hash, '#/db/my%20db/design/a%2Fb/update/st%20amp');
    const routed = app.route(hash);
    assert.deepEqual(routed.segments, ['db', 'my db', 'design', 'a/b', 'update', 'st amp']);
    assert.equal(routed.nav, 'databases');
    assert.equal(routed.page, page);
  });
});
