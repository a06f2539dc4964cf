// The admin console's pure functions (static/console/*.js), imported in Node (the modules touch
// the DOM only when called from the page), and the size rules of the architecture test applied to
// the console's own files: every file ≤ 300 lines, every function ≤ 60 lines.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { CONSOLE_MODULES } from '../../src/http/routes/utils.js';

const DIR = new URL('../../../static/console/', import.meta.url);
const load = async <T>(name: string): Promise<T> => (await import(new URL(name, DIR).href)) as T;

const api = await load<{
  dbPath(db: string, id?: string, attachment?: string): string;
  query(params: Record<string, unknown>): string;
  failure(what: string, answer: { status: number; ok: boolean; body: unknown }): string;
}>('api.js');
const format = await load<{
  formatBytes(value: unknown): string;
  parseList(text: string): string[];
  listText(value: unknown): string;
  formatTime(value: unknown): string;
  parseJson(text: string): { ok: boolean; value?: unknown; error?: string };
}>('format.js');
const app = await load<{ route(hash: string): { segments: string[]; params: URLSearchParams; nav: string } }>('app.js');
const tasks = await load<{ endpoint(value: unknown): string }>('tasks.js');
const metrics = await load<{ leaves(tree: unknown): Array<{ path: string[]; type: string; value: unknown }>; describeValue(value: unknown): string }>('metrics.js');

const mango = await load<{
  findRequest(input: { selector: string; fields: string; sort: string; limit: string }): { ok: boolean; value?: unknown; field?: string; error?: string };
  indexRequest(input: { fields: string; name: string; ddoc: string; partial: string }): { ok: boolean; value?: unknown; field?: string; error?: string };
}>('mango-query.js');
const views = await load<{
  viewQuery(input: Record<string, unknown>): { ok: boolean; params?: Record<string, string>; keys?: unknown[]; field?: string; error?: string };
  withView(ddoc: Record<string, unknown>, name: string, map: string, reduce: string): Record<string, unknown>;
}>('view-query.js');
const replication = await load<{
  endpointSpec(input: { kind: string; location: string; username: string; password: string }, origin: string, role: string): { ok: boolean; value?: unknown; error?: string };
  jobState(job: unknown): string;
}>('replication-spec.js');

const series = await load<{
  counters(stats: unknown): Record<string, Record<string, number>>;
  rates(before: Record<string, number>, after: Record<string, number>, seconds: number): Record<string, number | null>;
  charts(samples: Array<{ time: number; stats: unknown; system: unknown }>): Array<{ id: string; series: Array<{ name: string; values: Array<number | null> }> }>;
  memoryMiB(system: unknown): number | undefined;
}>('metrics-series.js');
const documents = await load<{ pageLink(earlier: string[], limit: number): string | null | undefined }>('documents.js');
const progress = await load<{ describeProgress(index: unknown, task: unknown): string }>('view-progress.js');
const chartsModule = await load<{ polylines(values: Array<number | null>, max: number, slots: number): string[] }>('charts.js');

const VIEW_INPUT = { key: '', keys: '', startkey: '', endkey: '', inclusiveEnd: true, reduce: true, groupLevel: '', includeDocs: false, limit: '', skip: '', descending: false, hasReduce: true };

describe('static/console modules', () => {
  test('findRequest: selector, fields, sort in words or JSON, limit; each mistake names its field', () => {
    assert.deepEqual(mango.findRequest({ selector: '{"a":1}', fields: '_id, b c', sort: 'year desc, title', limit: '5' }), {
      ok: true,
      value: { selector: { a: 1 }, fields: ['_id', 'b c'], sort: [{ year: 'desc' }, { title: 'asc' }], limit: 5 },
    });
    assert.deepEqual(mango.findRequest({ selector: '{}', fields: '', sort: '[{"n":"desc"}]', limit: '' }), { ok: true, value: { selector: {}, sort: [{ n: 'desc' }] } });
    assert.equal(mango.findRequest({ selector: '[1]', fields: '', sort: '', limit: '' }).field, 'selector');
    assert.equal(mango.findRequest({ selector: '{', fields: '', sort: '', limit: '' }).field, 'selector');
    assert.equal(mango.findRequest({ selector: '{}', fields: '', sort: '[{"a":1,"b":2}]', limit: '' }).field, 'sort');
    assert.equal(mango.findRequest({ selector: '{}', fields: '', sort: '', limit: '-1' }).field, 'limit');
    assert.equal(mango.findRequest({ selector: '{}', fields: '', sort: '', limit: '2.5' }).field, 'limit');
  });

  test('indexRequest: a JSON index with its fields, optional name, design document and partial filter', () => {
    assert.deepEqual(mango.indexRequest({ fields: 'type, year desc', name: ' by-year ', ddoc: '_design/years', partial: '{"type":"post"}' }), {
      ok: true,
      value: { index: { fields: [{ type: 'asc' }, { year: 'desc' }], partial_filter_selector: { type: 'post' } }, type: 'json', name: 'by-year', ddoc: 'years' },
    });
    assert.equal(mango.indexRequest({ fields: ' ', name: '', ddoc: '', partial: '' }).field, 'index fields');
    assert.equal(mango.indexRequest({ fields: 'a', name: '', ddoc: '', partial: '"x"' }).field, 'partial filter selector');
  });

  test('viewQuery: keys as JSON, reduce and group level, include_docs only without reduce', () => {
    assert.deepEqual(views.viewQuery({ ...VIEW_INPUT, startkey: '["a"]', endkey: '["a", {}]', groupLevel: '1', limit: '10', descending: true, inclusiveEnd: false }), {
      ok: true,
      params: { startkey: '["a"]', endkey: '["a",{}]', reduce: 'true', group_level: '1', descending: 'true', inclusive_end: 'false', limit: '10' },
      keys: undefined,
    });
    assert.deepEqual(views.viewQuery({ ...VIEW_INPUT, hasReduce: false, includeDocs: true, keys: '["a", 2]' }), { ok: true, params: { include_docs: 'true' }, keys: ['a', 2] });
    assert.equal(views.viewQuery({ ...VIEW_INPUT, key: 'apple' }).field, 'key', 'a string without quotes');
    assert.equal(views.viewQuery({ ...VIEW_INPUT, keys: '"a"' }).field, 'keys');
    assert.equal(views.viewQuery({ ...VIEW_INPUT, includeDocs: true }).field, 'include_docs', 'CouchDB refuses include_docs on a reduce');
    assert.equal(views.viewQuery({ ...VIEW_INPUT, reduce: false, groupLevel: '2' }).field, 'group level');
    assert.equal(views.viewQuery({ ...VIEW_INPUT, limit: 'ten' }).field, 'limit');
  });

  test('describeProgress: the indexer\'s percentage first, else what _info says, else that the server did not say', () => {
    assert.equal(progress.describeProgress(undefined, { progress: 40, changes_done: 4000, total_changes: 10000 }), 'Building the index: 40 % (4,000 of 10,000 changes).');
    assert.equal(progress.describeProgress({ updater_running: true, updates_pending: { total: 12 } }, undefined), 'Building the index: 12 changes to go.');
    assert.equal(progress.describeProgress({ updater_running: false, updates_pending: { total: 3 } }, undefined), 'The index is 3 changes behind; the next query brings it up to date.');
    assert.equal(progress.describeProgress({ updater_running: false, updates_pending: { total: 0 }, update_seq: 11 }, undefined), 'The index is up to date (sequence 11).');
    assert.equal(progress.describeProgress(undefined, undefined), 'The server did not say how far the index is built.');
  });

  test('withView: sets one view, removes its reduce when none, keeps the other members', () => {
    const ddoc = { _id: '_design/a', _rev: '1-x', views: { old: { map: 'm' }, v: { map: 'a', reduce: '_sum' } }, validate_doc_update: 'f' };
    assert.deepEqual(views.withView(ddoc, 'v', 'b', ''), { _id: '_design/a', _rev: '1-x', language: 'javascript', views: { old: { map: 'm' }, v: { map: 'b' } }, validate_doc_update: 'f' });
    assert.deepEqual(views.withView({ _id: '_design/n' }, 'v', 'm', '_count'), { _id: '_design/n', language: 'javascript', views: { v: { map: 'm', reduce: '_count' } } });
  });

  test('replication endpoints: a local database is this origin\'s URL; credentials go to auth.basic, never into the URL', () => {
    assert.deepEqual(replication.endpointSpec({ kind: 'local', location: 'a/b', username: 'root', password: 'pw' }, 'http://127.0.0.1:5984', 'source'), {
      ok: true,
      value: { url: 'http://127.0.0.1:5984/a%2Fb', auth: { basic: { username: 'root', password: 'pw' } } },
    });
    assert.deepEqual(replication.endpointSpec({ kind: 'remote', location: 'https://bob:s%40cret@db.example.org/x', username: '', password: '' }, 'http://h', 'target'), {
      ok: true,
      value: { url: 'https://db.example.org/x', auth: { basic: { username: 'bob', password: 's@cret' } } },
    });
    assert.deepEqual(replication.endpointSpec({ kind: 'remote', location: 'http://open.example.org/x', username: ' ', password: '' }, 'http://h', 'target'), { ok: true, value: { url: 'http://open.example.org/x' } });
    assert.equal(replication.endpointSpec({ kind: 'remote', location: 'ftp://x/y', username: '', password: '' }, 'http://h', 'source').ok, false);
    assert.equal(replication.endpointSpec({ kind: 'remote', location: 'db-name', username: '', password: '' }, 'http://h', 'source').ok, false);
    assert.equal(replication.endpointSpec({ kind: 'local', location: '  ', username: '', password: '' }, 'http://h', 'source').ok, false);
    assert.equal(replication.jobState({ state: 'crashing' }), 'crashing');
    assert.equal(replication.jobState({ history: [{ type: 'started' }, { type: 'added' }] }), 'running');
    assert.equal(replication.jobState({}), '—');
  });

  test('dbPath encodes each segment; _design/ and _local/ keep their slash', () => {
    assert.equal(api.dbPath('a/b'), '/a%2Fb');
    assert.equal(api.dbPath('db', 'x/y?z#w'), '/db/x%2Fy%3Fz%23w');
    assert.equal(api.dbPath('db', '_design/app'), '/db/_design/app');
    assert.equal(api.dbPath('db', '_local/ck pt'), '/db/_local/ck%20pt');
    assert.equal(api.dbPath('db', '<img src=x>'), '/db/%3Cimg%20src%3Dx%3E');
    assert.equal(api.dbPath('db', 'doc', 'dir/a b.txt'), '/db/doc/dir/a%20b.txt');
  });

  test('query leaves out undefined values; failure keeps the server\'s error and reason', () => {
    assert.equal(api.query({ limit: 20, skip: undefined, key: '"a"' }), '?limit=20&key=%22a%22');
    assert.equal(api.query({}), '');
    assert.equal(api.failure('Could not', { status: 404, ok: false, body: { error: 'not_found', reason: 'missing' } }), 'Could not (404 not_found: missing).');
    assert.match(api.failure('Could not', { status: 401, ok: false, body: {} }), /not signed in/);
    assert.match(api.failure('Could not', { status: 0, ok: false, body: undefined }), /Could not reach the server/);
  });

  test('formats: sizes, lists typed by people, times, JSON errors', () => {
    assert.equal(format.formatBytes(812), '812 B');
    assert.equal(format.formatBytes(1536), '1.5 KiB');
    assert.equal(format.formatBytes(undefined), '—');
    assert.deepEqual(format.parseList(' a, b  c,,a '), ['a', 'b', 'c']);
    assert.equal(format.listText(['x', 3, 'y']), 'x, y');
    assert.equal(format.formatTime(0), '1970-01-01 00:00:00 UTC');
    assert.equal(format.formatTime('nonsense'), '—');
    assert.equal(format.parseJson('{"a":1}').ok, true);
    assert.equal(format.parseJson('{"a":').ok, false);
  });

  test('route: each hash shows its page with its decoded segments', () => {
    assert.equal(app.route('').nav, 'databases');
    assert.equal(app.route('#/users').nav, 'users');
    const doc = app.route('#/db/a%2Fb/doc/x%2Fy?rev=1-a');
    assert.deepEqual(doc.segments, ['db', 'a/b', 'doc', 'x/y']);
    assert.equal(doc.params.get('rev'), '1-a');
    assert.deepEqual(app.route('#/db/x/doc/%E0%A4%A').segments, ['db', 'x', 'doc', '%E0%A4%A'], 'a broken escape stays as typed');
    assert.equal(app.route('#/constructor').nav, 'databases', 'only the listed pages');
    assert.equal(app.route('#/__proto__').nav, 'databases');
  });

  test('replication endpoints are shown without their credentials', () => {
    assert.equal(tasks.endpoint('http://bob:pw@example.org/db'), 'http://example.org/db');
    assert.equal(tasks.endpoint({ url: 'https://a:b@h:5984/x', headers: { Authorization: 'Basic x' } }), 'https://h:5984/x');
    assert.equal(tasks.endpoint('not a url://u:p@x'), 'not a url://x');
    assert.equal(tasks.endpoint(undefined), '—');
  });

  test('metrics: the leaves of CouchDB\'s stats tree, counters and histograms', () => {
    const tree = {
      couchdb: {
        httpd: { requests: { value: 12, type: 'counter', desc: 'requests' } },
        request_time: { value: { arithmetic_mean: 1.5, median: 1, percentile: [[50, 1], [95, 4]], n: 12 }, type: 'histogram', desc: 'ms' },
      },
    };
    const found = metrics.leaves(tree);
    assert.deepEqual(found.map((metric) => metric.path.join('.')), ['couchdb.httpd.requests', 'couchdb.request_time']);
    assert.equal(metrics.describeValue(12), '12');
    assert.equal(metrics.describeValue(found[1]!.value), 'mean 1.5, median 1, 95th 4, n 12');
    assert.deepEqual(metrics.leaves({ error: 'not_found' }), []);
  });
});

describe('static/console live metrics', () => {
  const counter = (value: number) => ({ value, type: 'counter' });
  const stats = (get: number, put: number, ok: number, notFound: number, fails: number) => ({
    couchdb: {
      httpd_request_methods: { GET: counter(get), PUT: counter(put) },
      httpd_status_codes: { '200': counter(ok), '201': counter(put), '404': counter(notFound), bogus: counter(99) },
      request_time: { value: { percentile: [[50, 1.5], [75, 2], [95, 9], [99, 20]] } },
      httpd: { clients_requesting_changes: counter(2) },
    },
    divan: { auth: { basic: { success: counter(3), wrong_password: counter(fails), bad_token: counter(1), lockout: counter(0) }, cookie: { success: counter(4) } } },
  });

  test('counters: methods, status classes, authentication outcomes summed over handlers', () => {
    assert.deepEqual(series.counters(stats(5, 2, 4, 1, 2)), {
      methods: { GET: 5, PUT: 2 },
      statuses: { '2xx': 6, '4xx': 1 },
      auth: { successes: 7, failures: 3, lockouts: 0 },
    });
    assert.deepEqual(series.counters(undefined), { methods: {}, statuses: {}, auth: {} });
  });

  test('rates per second; a counter that went down (a restart) or a new one has no rate', () => {
    assert.deepEqual(series.rates({ a: 10, b: 5 }, { a: 30, b: 1, c: 4 }, 2), { a: 10, b: null, c: null });
  });

  test('charts: one value per interval for rates, percentiles and gauges per reading, memory in MiB', () => {
    const samples = [
      { time: 0, stats: stats(5, 0, 5, 0, 0), system: undefined },
      { time: 2000, stats: stats(9, 4, 9, 2, 2), system: { memory: { processes: 1024 * 1024, binary: 1024 * 1024 } } },
    ];
    const byId = new Map(series.charts(samples).map((chart) => [chart.id, chart.series]));
    assert.deepEqual(byId.get('chart-methods'), [{ name: 'GET', values: [2] }, { name: 'PUT', values: [2] }]);
    assert.deepEqual(byId.get('chart-statuses'), [{ name: '2xx', values: [4] }, { name: '4xx', values: [1] }]);
    assert.deepEqual(byId.get('chart-latency'), [{ name: 'p50', values: [1.5] }, { name: 'p95', values: [9] }, { name: 'p99', values: [20] }]);
    assert.deepEqual(byId.get('chart-auth'), [{ name: 'failures', values: [1] }, { name: 'lockouts', values: [0] }, { name: 'successes', values: [0] }]);
    assert.deepEqual(byId.get('chart-changes'), [{ name: 'feeds', values: [2] }]);
    assert.deepEqual(byId.get('chart-memory'), [{ name: 'memory', values: [2] }]);
    assert.equal(series.memoryMiB({}), undefined);
  });

  test('key paging: the previous page starts a page back from this one, or at the beginning', () => {
    assert.equal(documents.pageLink([], 3), undefined, 'the first page has none');
    assert.equal(documents.pageLink(['c', 'b'], 3), null, 'fewer than a page before: the beginning');
    assert.equal(documents.pageLink(['f', 'e', 'd', 'c'], 3), 'd');
  });

  test('polylines: scaled to the largest value, right-aligned in the slots, split at gaps', () => {
    assert.deepEqual(chartsModule.polylines([0, 5, 10], 10, 3), ['0.0,100.0 150.0,50.0 300.0,0.0']);
    assert.deepEqual(chartsModule.polylines([4], 8, 5), ['300.0,50.0']);
    assert.deepEqual(chartsModule.polylines([1, null, 1, 1], 0, 4), ['0.0,100.0', '200.0,100.0 300.0,100.0']);
    assert.deepEqual(chartsModule.polylines([null], 1, 2), []);
  });
});

describe('static/console size rules', () => {
  const dir = fileURLToPath(DIR);
  const files = readdirSync(dir).filter((name) => name.endsWith('.js'));

  test('every console module is served, and every served module exists', () => {
    assert.deepEqual(files.map((name) => `console/${name}`).sort(), [...CONSOLE_MODULES].sort());
  });

  test('every file ≤ 300 lines, every function ≤ 60 lines', () => {
    const problems: string[] = [];
    for (const name of files) {
      const text = readFileSync(`${dir}${name}`, 'utf8');
      const lines = text.split('\n').length;
      if (lines > 300) problems.push(`${name}: ${lines} lines`);
      const source = ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > 60) problems.push(`${name}:${start + 1}: a function of ${end - start + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(problems, []);
  });
});

test('the search page\'s sort: empty for relevance, one field as typed, or a JSON list of field names', async () => {
  const search = await load<{ parseSort(text: string): { ok: boolean; value?: unknown; error?: string } }>('search.js');
  assert.deepEqual(search.parseSort('  '), { ok: true, value: undefined });
  assert.deepEqual(search.parseSort('-price<double>'), { ok: true, value: '-price<double>' });
  assert.deepEqual(search.parseSort('["-price", "title"]'), { ok: true, value: ['-price', 'title'] });
  for (const bad of ['[1]', '[]', '["a"']) assert.equal(search.parseSort(bad).ok, false, bad);
});
