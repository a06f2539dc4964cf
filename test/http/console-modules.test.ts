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

describe('static/console modules', () => {
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
