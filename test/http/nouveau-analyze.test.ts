import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

/** `POST /_nouveau_analyze` (CouchDB 3.5's nouveau_httpd): the terms text becomes under an analyzer, as the index makes them. */
describeOnEachBackend('Nouveau _nouveau_analyze', (server) => {
  const analyze = (body: unknown) => server().admin('/_nouveau_analyze', { method: 'POST', body });

  test('standard folds case and splits on anything not a letter or digit, keeping every word in order', async () => {
    const res = await analyze({ analyzer: 'standard', text: 'The Runners were RUNNING quickly, 42 times!' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { tokens: ['the', 'runners', 'were', 'running', 'quickly', '42', 'times'] });
  });

  test('english stems (and on PostgreSQL drops stop words): the terms the index holds', async () => {
    const res = await analyze({ analyzer: 'english', text: 'The runners were running' });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.tokens.includes('run') && res.body.tokens.includes('runner'), res.text);
    assert.ok(!res.body.tokens.includes('running'), res.text);
  });

  test('keyword keeps the whole text as one term', async () => {
    assert.deepEqual((await analyze({ analyzer: 'keyword', text: 'New York, NY' })).body, { tokens: ['New York, NY'] });
  });

  test('an analyzer CouchDB does not know, a missing or empty field: 400 as CouchDB', async () => {
    assert.deepEqual((await analyze({ analyzer: 'klingon', text: 'x' })).body, { error: 'bad_request', reason: 'klingon is not a valid analyzer name' });
    assert.deepEqual((await analyze({ text: 'x' })).body, { error: 'bad_request', reason: "'text' and 'analyzer' fields must be non-empty strings" });
    assert.deepEqual((await analyze({ analyzer: 'standard', text: 42 })).body, { error: 'bad_request', reason: "'text' and 'analyzer' fields must be non-empty strings" });
    const empty = await analyze({ analyzer: 'standard', text: '' });
    assert.deepEqual([empty.status, empty.body], [400, { error: 'bad_request', reason: 'text must not be empty' }]);
    assert.equal((await analyze([1])).status, 400);
  });

  test('POST only (405 otherwise), and for server admins', async () => {
    const get = await server().admin('/_nouveau_analyze');
    assert.equal(get.status, 405);
    assert.equal(get.body.error, 'method_not_allowed');
    const anonymous = await server().request('/_nouveau_analyze', { method: 'POST', body: { analyzer: 'standard', text: 'x' } });
    assert.equal(anonymous.status, 401);
  });
});
