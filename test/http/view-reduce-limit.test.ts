import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

/**
 * `[query_server_config] reduce_limit` as CouchDB's: a JavaScript reduce whose output does not
 * shrink answers 200 with a `reduce_overflow_error` row (CouchDB's view_errors_test "reduce
 * overflow error"), `log` only logs it, `false` turns the check off; the threshold and the ratio
 * decide what "does not shrink" means.
 */
const GROWS = "function (keys, values) { var chars = []; for (var i = 0; i < 1000; i++) { chars.push('wazzap'); } return chars; }";
// 6000 characters from inputs of 100 rows of 200 characters: longer than the threshold, yet shrinking.
const SHRINKS = 'function (keys, values, rereduce) { return values.join("").slice(0, 6000); }';
const REASON = /^Reduce output must shrink more rapidly: input size: \d+ output size: \d+ context: limits\/_design\/app\/_view\/grows$/;

describeOnEachBackend('reduce_limit', (server) => {
  const setting = async (key: string, value: string): Promise<void> => {
    const res = await server().admin(`/_node/_local/_config/query_server_config/${key}`, { method: 'PUT', body: JSON.stringify(value) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const query = async (view: string, options = ''): Promise<{ rows: Record<string, unknown>[] }> => {
    const res = await server().admin(`/limits/_design/app/_view/${view}${options}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  test('setup: 100 documents and the design document', async () => {
    assert.equal((await server().admin('/limits', { method: 'PUT' })).status, 201);
    const map = 'function (doc) { emit(doc.integer % 3, doc.text); }';
    const views = { grows: { map: 'function (doc) { emit(doc.integer % 3, doc.integer); }', reduce: GROWS }, shrinks: { map, reduce: SHRINKS } };
    assert.equal((await server().admin('/limits/_design/app', { method: 'PUT', body: { views } })).status, 201);
    const docs = Array.from({ length: 100 }, (_, integer) => ({ integer, text: String(integer % 10).repeat(200) }));
    assert.equal((await server().admin('/limits/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
  });

  test('a reduce whose output does not shrink answers a reduce_overflow_error row with CouchDB\'s reason', async () => {
    const { rows } = await query('grows');
    assert.equal(rows.length, 1);
    assert.deepEqual(Object.keys(rows[0]!).sort(), ['error', 'key', 'reason']);
    assert.equal(rows[0]!['key'], null);
    assert.equal(rows[0]!['error'], 'reduce_overflow_error');
    assert.match(String(rows[0]!['reason']), REASON);
  });

  test('with group=true every group that overflows answers the error row', async () => {
    const { rows } = await query('grows', '?group=true');
    assert.equal(rows.length, 3);
    assert.ok(rows.every((row) => row['error'] === 'reduce_overflow_error' && row['key'] === null), JSON.stringify(rows).slice(0, 300));
  });

  test('an output past the threshold that is shorter than half the input is answered', async () => {
    const { rows } = await query('shrinks');
    assert.equal(rows.length, 1);
    assert.equal(typeof rows[0]!['value'], 'string');
    assert.equal((rows[0]!['value'] as string).length, 6000);
  });

  test('a higher reduce_limit_threshold lets the output through', async () => {
    await setting('reduce_limit_threshold', '100000');
    try {
      const { rows } = await query('grows');
      assert.equal((rows[0]!['value'] as string[]).length, 1000);
    } finally {
      await setting('reduce_limit_threshold', '5000');
    }
  });

  test('reduce_limit = log answers the value and logs the overflow', async () => {
    await setting('reduce_limit', 'log');
    try {
      const { rows } = await query('grows', '?group=true');
      assert.equal(rows.length, 3);
      assert.deepEqual(rows.map((row) => row['key']), [0, 1, 2]);
      assert.ok(rows.every((row) => Array.isArray(row['value']) && row['value'].length === 1000));
      assert.ok(server().logs.some((line) => line.includes('reduce_overflow_error: Reduce output must shrink more rapidly')));
    } finally {
      await setting('reduce_limit', 'true');
    }
  });

  test('reduce_limit = false answers the value without a check', async () => {
    await setting('reduce_limit', 'false');
    try {
      const before = server().logs.filter((line) => line.includes('reduce_overflow_error')).length;
      const { rows } = await query('grows');
      assert.equal((rows[0]!['value'] as string[]).length, 1000);
      assert.equal(server().logs.filter((line) => line.includes('reduce_overflow_error')).length, before);
    } finally {
      await setting('reduce_limit', 'true');
    }
    assert.equal((await query('grows')).rows[0]!['error'], 'reduce_overflow_error');
  });
});
