import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

/** `_list` functions answer as CouchDB 3.5 (chttpd_show:handle_view_list_req, couch_mrview_show:list_cb, render.js runList). */
const lists = {
  basic: 'function (head, req) { send("head"); var row; while (row = getRow()) send(row.key); return "tail"; }',
  json: 'function (head, req) { start({ headers: { "Content-Type": "application/json" } }); var rows = [], row; while (row = getRow()) rows.push(row); return toJSON({ head: head, req: req, rows: rows }); }',
  count: 'function (head) { var n = 0, last = null, row; while (row = getRow()) { if (row.key !== n) throw new Error("row " + n + " is " + row.key); n++; last = row.key; } return n + " rows, last " + last; }',
  span: 'function () { var first = null, last = null, n = 0, row; while (row = getRow()) { if (first === null) first = row.key; last = row.key; n++; } return n + " " + first + " " + last; }',
  stopIter: 'function () { send("head"); var row, n = 0; while (row = getRow()) { if (n > 2) break; send(" " + n); n++; } return " tail"; }',
  tooManyGetRows: 'function () { var row; while (row = getRow()) send(row.key); getRow(); getRow(); row = getRow(); return "after row: " + toJSON(row); }',
  accept: 'function () { provides("html", function () { send("HTML <ul>"); var row; while (row = getRow()) send("<li>" + row.key); return "</ul>"; }); provides("csv", function () { return "csv"; }); }',
  headerAfterRow: 'function () { getRow(); start({ code: 400, headers: { "X-My-Header": "MyHeader" } }); send("bad request"); }',
  docs: 'function () { var row = getRow(); return String(row.doc.n); }',
  throwsFirst: 'function () { throw { error: "forbidden", reason: "not you" }; }',
  rowError: 'function () { send("head"); getRow(); send(fooBarBam); return "tail"; }',
  loops: 'function () { while (true) {} }',
  objectTail: 'function () { return { a: 1 }; }',
  empty: 'function () {}',
};
const views = {
  by_n: { map: 'function (doc) { if (typeof doc.n === "number") emit(doc.n, "v" + doc.n); }' },
  counted: { map: 'function (doc) { if (typeof doc.n === "number") emit(doc.n % 3, 1); }', reduce: '_count' },
};
const DOCS = 2500;

describeOnEachBackend('list functions', (server) => {
  const get = (path: string, headers: Record<string, string> = {}) => server().admin(`/ls/_design/app/_list/${path}`, { headers });

  before(async () => {
    const s = server();
    assert.equal((await s.admin('/ls', { method: 'PUT' })).status, 201);
    assert.equal((await s.admin('/ls/_design/app', { method: 'PUT', body: { lists, views } })).status, 201);
    assert.equal((await s.admin('/ls/_design/other', { method: 'PUT', body: { views: { neg: { map: 'function (doc) { if (doc.n < 10) emit(-doc.n, null); }' } } } })).status, 201);
    const docs = Array.from({ length: DOCS }, (_, n) => ({ _id: `d${String(n).padStart(5, '0')}`, n }));
    assert.equal((await s.admin('/ls/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });

  test('the rows in order, the return value as the tail, chunked, with the sandbox policy and CouchDB\'s default type', async () => {
    const res = await get('basic/by_n?limit=10');
    assert.deepEqual([res.status, res.text], [200, 'head0123456789tail']);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['content-security-policy'], 'sandbox');
    assert.equal((await server().admin('/ls/_design/app/_list/basic/by_n?limit=3', { method: 'OPTIONS' })).text, 'head012tail');
  });

  test('every row of a view longer than a batch reaches the function, in order', async () => {
    assert.equal((await get('count/by_n')).text, `${DOCS} rows, last ${DOCS - 1}`);
    assert.equal((await get('span/by_n?skip=1200&limit=1100')).text, '1100 1200 2299');
    assert.equal((await get('span/by_n?descending=true&skip=100')).text, `${DOCS - 100} ${DOCS - 101} 0`);
    assert.equal((await get('basic/by_n?keys=[5,6,7,8]&skip=1&limit=2')).text, 'head67tail');
    assert.equal((await get('basic/by_n?startkey=2497')).text, 'head249724982499tail');
    assert.equal((await get('basic/by_n?descending=true&limit=3')).text, 'head249924982497tail');
  });

  test('head and req: total_rows, offset, update_seq when asked, and the request', async () => {
    const res = await get('json/by_n?startkey=5&limit=2&update_seq=true&foo=blam');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual({ ...res.body.head, update_seq: typeof res.body.head.update_seq }, { total_rows: DOCS, offset: 5, update_seq: 'string' });
    assert.deepEqual(res.body.rows, [{ id: 'd00005', key: 5, value: 'v5' }, { id: 'd00006', key: 6, value: 'v6' }]);
    assert.deepEqual(res.body.req.path, ['ls', '_design', 'app', '_list', 'json', 'by_n']);
    assert.equal(res.body.req.query.foo, 'blam');
    assert.equal(res.body.req.info.db_name, 'ls');
    assert.equal(res.body.req.id, null);
  });

  test('keys by POST body and by query string, include_docs, zero rows', async () => {
    const posted = await server().admin('/ls/_design/app/_list/basic/by_n', { method: 'POST', body: { keys: [7, 2, 4] } });
    assert.deepEqual([posted.status, posted.text], [200, 'head724tail']);
    assert.equal((await get('basic/by_n?keys=[9,1]')).text, 'head91tail');
    assert.equal((await get('docs/by_n?include_docs=true&startkey=42')).text, '42');
    assert.equal((await get('basic/by_n?startkey=999999')).text, 'headtail');
  });

  test('reduced views: groups as rows, reduce=false as map rows, and a view of another design document', async () => {
    assert.equal((await get('json/counted?group=true')).body.rows.map((row: { key: number; value: number }) => `${row.key}:${row.value}`).join(' '), '0:834 1:833 2:833');
    assert.deepEqual((await get('json/counted?group=true')).body.head, {});
    assert.equal((await get('basic/counted?reduce=false&limit=4')).text, 'head0000tail');
    assert.equal((await get('basic/other/neg?limit=3')).text, 'head-9-8-7tail');
  });

  test('_all_docs through a list: its rows a page after another, head, keys (a missing one as CouchDB hands it on), include_docs, another design document', async () => {
    const all = DOCS + 2;
    assert.equal((await get('span/_all_docs')).text, `${all} _design/app d02499`);
    assert.equal((await get('span/_all_docs?descending=true&skip=100')).text, `${all - 100} d02399 _design/app`);
    const paged = await get('json/_all_docs?startkey="d00010"&limit=2');
    assert.deepEqual(paged.body.head, { total_rows: all, offset: 12 });
    assert.deepEqual(paged.body.rows.map((row: { id: string; key: string; value: { rev: string } }) => [row.id, row.key, typeof row.value.rev]), [['d00010', 'd00010', 'string'], ['d00011', 'd00011', 'string']]);
    assert.deepEqual(paged.body.req.path, ['ls', '_design', 'app', '_list', 'json', '_all_docs']);
    const gone = await server().admin('/ls/gone', { method: 'PUT', body: {} });
    await server().admin(`/ls/gone?rev=${gone.body.rev}`, { method: 'DELETE' });
    const keyed = await server().admin('/ls/_design/app/_list/json/_all_docs?include_docs=true', { method: 'POST', body: { keys: ['d00007', 'nope', 'gone', 5] } });
    assert.deepEqual(keyed.body.head, { total_rows: all, offset: null });
    const [found, missing, deleted, number] = keyed.body.rows;
    assert.deepEqual([found.doc.n, deleted.value.deleted, deleted.doc], [7, true, null]);
    // As CouchDB 3.5.0 answers, side by side.
    assert.deepEqual([missing, number], [{ id: 'error', key: 'nope', value: 'not_found' }, { id: 'error', key: 5, value: 'not_found' }]);
    assert.equal((await get('basic/_all_docs?keys=["d00009","d00001"]')).text, 'headd00009d00001tail');
    assert.equal((await get('docs/_all_docs?include_docs=true&key="d00042"')).text, '42');
    assert.equal((await get('basic/other/_all_docs?limit=2')).text, 'head_design/app_design/othertail');
    assert.deepEqual((await get('basic/ghost/_all_docs')).status, 404);
    assert.deepEqual((await get('nope/_all_docs')).body, { error: 'not_found', reason: 'missing json key: nope' });
    const badKeys = await get('basic/_all_docs?keys=5');
    assert.deepEqual([badKeys.status, badKeys.body], [400, { error: 'query_parse_error', reason: '`keys` must be an array of strings.' }]);
    const mixed = await get('basic/_all_docs?keys=["d00001"]&key="d00002"');
    assert.deepEqual([mixed.status, mixed.body.error], [400, 'query_parse_error']);
  });

  test('getRow after the last row, breaking out early, and a function that never reads rows', async () => {
    assert.equal((await get('tooManyGetRows/by_n?limit=10')).text, '0123456789after row: null');
    assert.equal((await get('stopIter/by_n')).text, 'head 0 1 2 tail');
    const empty = await get('empty/by_n');
    assert.deepEqual([empty.status, empty.text], [200, '']);
  });

  test('provides and Accept: the best type runs and names its Content-Type; format= picks one; no match is 406', async () => {
    const html = await get('accept/by_n?limit=2', { Accept: 'text/html' });
    assert.deepEqual([html.headers['content-type'], html.text], ['text/html; charset=utf-8', 'HTML <ul><li>0<li>1</ul>']);
    const csv = await get('accept/by_n?format=csv');
    assert.deepEqual([csv.headers['content-type'], csv.text], ['text/csv', 'csv']);
    const none = await get('accept/by_n', { Accept: 'image/png' });
    assert.deepEqual([none.status, none.body.error], [406, 'not_acceptable']);
    assert.match(none.body.reason, /^Content-Type image\/png not supported, try one of: /);
  });

  test('a start() after getRow still sets the head while nothing was sent', async () => {
    const res = await get('headerAfterRow/by_n');
    assert.deepEqual([res.status, res.headers['x-my-header'], res.text], [400, 'MyHeader', 'bad request']);
  });

  test('CouchDB\'s errors before any output: missing function, design document or view, bad path, method, body', async () => {
    const missing = await get('nope/by_n');
    assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'missing json key: nope' }]);
    const noView = await get('basic/nope');
    assert.deepEqual([noView.status, noView.body.error], [404, 'not_found']);
    assert.equal((await get('basic/ghost/by_n')).status, 404);
    assert.equal((await server().admin('/ls/_design/ghost/_list/basic/by_n')).status, 404);
    const badPath = await get('basic');
    assert.deepEqual([badPath.status, badPath.body], [404, { error: 'list_error', reason: 'Invalid path.' }]);
    const put = await server().admin('/ls/_design/app/_list/basic/by_n', { method: 'PUT', body: {} });
    assert.equal(put.status, 405);
    const form = await server().admin('/ls/_design/app/_list/basic/by_n', { method: 'POST', body: 'keys=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    const grouped = await server().admin('/ls/_design/app/_list/basic/counted?group=false', { method: 'POST', body: { keys: [1, 2] } });
    assert.deepEqual([grouped.status, grouped.body.error], [400, 'query_parse_error']);
  });

  test('a function that throws: its error before any output, appended to the output after it; time-outs; non-string output', async () => {
    const thrown = await get('throwsFirst/by_n');
    assert.deepEqual([thrown.status, thrown.body], [403, { error: 'forbidden', reason: 'not you' }]);
    const late = await get('rowError/by_n');
    assert.equal(late.status, 200);
    assert.match(late.text, /^head\n\{"code":500,"error":"render_error","reason":"function raised error: ReferenceError: 'fooBarBam' is not defined"\}\n$/);
    const loops = await get('loops/by_n');
    assert.deepEqual([loops.status, loops.body.error], [500, 'os_process_error']);
    // As CouchDB 3.5.0 answers (a chunk is an iolist): an object returned writes nothing.
    const object = await get('objectTail/by_n');
    assert.deepEqual([object.status, object.text], [200, '']);
  });
}, '[couchdb]\nos_process_timeout = 2000\n');
