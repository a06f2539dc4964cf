import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { ADMIN, startServer, type TestServer } from '../support/server.js';

const family = (families: ParsedFamily[], name: string): ParsedFamily => {
  const found = families.find((candidate) => candidate.name === name);
  assert.ok(found, `${name} is in the scrape`);
  return found;
};

const sample = (found: ParsedFamily, labels: Record<string, string> = {}): number =>
  Number(found.metrics.find((metric) => Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value))?.value);

describe('metrics: /_node/{node}/_stats and _prometheus', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/_users/org.couchdb.user:reader', { method: 'PUT', body: { name: 'reader', password: 'reader-pass', roles: ['_metrics'], type: 'user' } });
    await server.admin('/_users/org.couchdb.user:plain', { method: 'PUT', body: { name: 'plain', password: 'plain-pass', roles: [], type: 'user' } });
  });
  after(async () => server.close());

  test('GET /_node/_local/_stats is CouchDB tree: counters with value, type and desc; request_time a histogram', async () => {
    await server.admin('/_all_dbs');
    const res = await server.admin('/_node/_local/_stats');
    assert.equal(res.status, 200);
    const requests = res.body.couchdb.httpd.requests;
    assert.equal(requests.type, 'counter');
    assert.equal(requests.desc, 'number of HTTP requests');
    assert.ok(requests.value >= 1);
    assert.ok(res.body.couchdb.httpd_request_methods.GET.value >= 1);
    assert.ok(res.body.couchdb.httpd_status_codes['200'].value >= 1);
    assert.equal(res.body.couchdb.httpd_request_methods.COPY.value, 0, 'every method is listed, as CouchDB');
    const time = res.body.couchdb.request_time;
    assert.equal(time.type, 'histogram');
    for (const key of ['min', 'max', 'arithmetic_mean', 'geometric_mean', 'harmonic_mean', 'median', 'variance', 'standard_deviation', 'skewness', 'kurtosis', 'percentile', 'histogram', 'n']) {
      assert.ok(key in time.value, key);
    }
    assert.deepEqual(time.value.percentile.map(([p]: [number]) => p), [50, 75, 90, 95, 99, 999]);
    assert.ok(time.value.n >= 1);
  });

  test('a path below _stats answers that part of the tree, or null when there is none', async () => {
    const part = await server.admin('/_node/_local/_stats/couchdb/request_time');
    assert.equal(part.status, 200);
    assert.equal(part.body.type, 'histogram');
    const named = await server.admin('/_node/divan@127.0.0.1/_stats/couchdb/httpd/requests');
    assert.equal(named.body.type, 'counter');
    const none = await server.admin('/_node/_local/_stats/couchdb/no_such_stat');
    assert.deepEqual([none.status, none.text], [200, 'null\n']);
  });

  test('a counter moves with the requests it counts', async () => {
    const before = (await server.admin('/_node/_local/_stats/couchdb/httpd_status_codes/404')).body.value;
    await server.admin('/nothing-here');
    await server.admin('/nothing-here');
    const later = (await server.admin('/_node/_local/_stats/couchdb/httpd_status_codes/404')).body.value;
    assert.equal(later, before + 2);
  });

  test('only server admins and _metrics users read metrics, as CouchDB require_metrics', async () => {
    for (const path of ['/_node/_local/_stats', '/_node/_local/_prometheus', '/_node/_local/_system']) {
      const anonymous = await server.request(path);
      assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'unauthorized', reason: 'You are not a server admin or read-only metrics user' }], path);
      assert.equal((await server.request(path, { auth: ['plain', 'plain-pass'] })).status, 401, path);
      assert.equal((await server.request(path, { auth: ['reader', 'reader-pass'] })).status, 200, path);
    }
    assert.equal((await server.request('/_node/_local/_versions', { auth: ['reader', 'reader-pass'] })).status, 401, '_versions is for server admins');
  });

  test('a Prometheus scrape parses with a real parser and carries CouchDB names and Divan additions', async () => {
    await server.request('/', { auth: [ADMIN[0], 'wrong'] });
    await server.request('/', { auth: ['plain', 'plain-pass'] });
    const res = await server.admin('/_node/_local/_prometheus');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(res.text);
    assert.equal(family(families, 'couchdb_httpd_requests_total').type, 'COUNTER');
    assert.ok(sample(family(families, 'couchdb_httpd_request_methods'), { method: 'GET' }) >= 1);
    assert.ok(sample(family(families, 'couchdb_httpd_status_codes'), { code: '401' }) >= 1);
    const latency = family(families, 'couchdb_request_time_seconds');
    assert.equal(latency.type, 'SUMMARY');
    assert.deepEqual(Object.keys(latency.metrics[0]!.quantiles ?? {}), ['0.5', '0.75', '0.9', '0.95', '0.99', '0.999']);
    assert.ok(Number(latency.metrics[0]!.count) >= 1);
    const auth = family(families, 'divan_auth_requests_total');
    assert.ok(sample(auth, { method: 'basic', outcome: 'wrong_password' }) >= 1);
    assert.ok(sample(auth, { method: 'basic', outcome: 'success' }) >= 2);
    assert.equal(family(families, 'couchdb_httpd_clients_requesting_changes').type, 'GAUGE');
    assert.ok(sample(family(families, 'couchdb_uptime_seconds')) >= 0);
    assert.ok(sample(family(families, 'couchdb_auth_cache_requests_total')) >= 1);
    assert.ok(sample(family(families, 'divan_cache_hits_total'), { cache: 'passwords' }) >= 1, 'the second admin request skipped the hash');
  });

  test('document reads and writes, and storage write time, are counted', async () => {
    await server.admin('/counted', { method: 'PUT' });
    const first = (await server.admin('/_node/_local/_stats')).body;
    await server.admin('/counted/a', { method: 'PUT', body: { n: 1 } });
    await server.admin('/counted/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'b' }, { _id: 'c' }] } });
    await server.admin('/counted/a');
    const later = (await server.admin('/_node/_local/_stats')).body;
    assert.equal(later.couchdb.database_writes.value - first.couchdb.database_writes.value, 3);
    assert.ok(later.couchdb.database_reads.value - first.couchdb.database_reads.value >= 1);
    assert.ok(later.divan.storage.write_time.value.n >= 2);
  });

  test('open _changes feeds are counted while they are open', async () => {
    await server.admin('/feeds', { method: 'PUT' });
    const controller = new AbortController();
    const auth = `Basic ${Buffer.from(ADMIN.join(':')).toString('base64')}`;
    const feed = await fetch(`${server.url}/feeds/_changes?feed=continuous&heartbeat=50`, { headers: { Authorization: auth }, signal: controller.signal });
    const reader = feed.body!.getReader();
    await reader.read();
    const open = (await server.admin('/_node/_local/_stats/couchdb/httpd/clients_requesting_changes')).body.value;
    assert.equal(open, 1);
    controller.abort();
    await reader.read().catch(() => undefined);
    let closed = open;
    for (let i = 0; i < 100 && closed !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      closed = (await server.admin('/_node/_local/_stats/couchdb/httpd/clients_requesting_changes')).body.value;
    }
    assert.equal(closed, 0);
  });

  test('_system has CouchDB keys with values of this process; _versions names the runtime', async () => {
    const system = await server.admin('/_node/_local/_system');
    assert.equal(system.status, 200);
    assert.ok(system.body.uptime >= 0);
    assert.ok(system.body.memory.processes_used > 0);
    for (const key of ['other', 'atom', 'atom_used', 'processes', 'processes_used', 'binary', 'code', 'ets']) assert.equal(typeof system.body.memory[key], 'number', key);
    for (const key of ['run_queue', 'context_switches', 'io_input', 'io_output', 'process_count', 'message_queues']) assert.ok(key in system.body, key);
    const versions = await server.admin('/_node/_local/_versions');
    assert.equal(versions.body.node.version, process.versions.node);
    assert.ok(versions.body.node.supported_hashes.includes('sha256'));
    // CouchDB 3.5 names its engine as `{name}` (a `version` only for spidermonkey): tests pick the sandbox's behaviour from it.
    assert.deepEqual(versions.body.javascript_engine, { name: 'quickjs' });
  });

  test('/_node answers its name, refuses other nodes, unknown parts and other methods as CouchDB', async () => {
    assert.deepEqual((await server.admin('/_node/_local')).body, { name: 'divan@127.0.0.1' });
    const other = await server.admin('/_node/elsewhere@host/_stats');
    assert.deepEqual([other.status, other.body], [404, { error: 'not_found', reason: 'no such node: elsewhere@host' }]);
    assert.deepEqual((await server.admin('/_node')).body, { error: 'bad_request', reason: 'Incomplete path to _node request' });
    assert.equal((await server.admin('/_node/_local/_stats', { method: 'POST', body: {} })).status, 405);
    assert.equal((await server.admin('/_node/_local/_nothing')).status, 404);
    assert.equal((await server.request('/_node/_local/_nothing')).status, 401);
  });
});
