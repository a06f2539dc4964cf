// Issue 32 (security), the replicator's items: endpoint headers checked when parsed (item 2),
// client-address headers refused (item 4); the stub-server items (5, 6) are in
// replication-limits.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { FAST_INI, createUser, freshAddress, fromAddress, postSession } from '../support/users-helpers.js';

describe('issue 32: replication endpoints are checked when parsed', () => {
  let server: TestServer;
  const ann: [string, string] = ['ann', 'ann-pass'];
  before(async () => {
    server = await startServer({ ini: FAST_INI });
    await createUser(server, ...ann);
    assert.equal((await server.admin('/src', { method: 'PUT' })).status, 201);
    const members = { admins: { names: [], roles: [] }, members: { names: ['ann'], roles: [] } };
    assert.equal((await server.admin('/_replicator/_security', { method: 'PUT', body: members })).status, 200);
  });
  after(async () => server.close());

  const replicateAs = (auth: [string, string], headers: Record<string, string>) =>
    server.request('/_replicate', { method: 'POST', auth, body: { source: { url: `${server.url}/src`, headers }, target: { url: `${server.url}/copy` }, create_target: true } });

  test('issue 32 item 2: a CRLF in a replication header value or an invalid header name answers 400 and the server keeps serving', async () => {
    const crlf = await replicateAs(ann, { 'X-Note': 'a\r\nInjected: yes' });
    assert.equal(crlf.status, 400, crlf.text);
    assert.equal(crlf.body.error, 'bad_request');
    assert.match(crlf.body.reason, /X-Note/);
    const badName = await replicateAs(ann, { 'bad name': 'x' });
    assert.equal(badName.status, 400, badName.text);
    assert.match(badName.body.reason, /not a valid HTTP header name/);
    const nul = await replicateAs(ann, { 'X-Note': 'a\u0000b' });
    assert.equal(nul.status, 400, nul.text);
    assert.equal((await server.request('/')).status, 200, 'the server still answers');
  });

  test('issue 32 item 2: a _replicator document whose endpoint has a CRLF header is refused with 403 and starts no job', async () => {
    const put = await server.admin('/_replicator/crlf', {
      method: 'PUT',
      body: { source: { url: `${server.url}/src`, headers: { 'X-Note': 'a\r\nb' } }, target: `${server.url}/copy`, continuous: true },
    });
    assert.equal(put.status, 403, put.text);
    assert.equal(put.body.error, 'forbidden');
    assert.match(put.body.reason, /X-Note/);
    assert.equal((await server.admin('/_replicator/crlf')).status, 404);
    assert.equal((await server.request('/')).status, 200);
  });

  test('issue 32 item 2: framing headers (Content-Length, Transfer-Encoding) in an endpoint answer 400', async () => {
    for (const name of ['Content-Length', 'transfer-encoding', 'Connection']) {
      const res = await replicateAs(ann, { [name]: '0' });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.match(res.body.reason, /frames its own requests/);
    }
  });

  test('issue 32 item 11: another user reads a _replicator document without the credentials any URL form Node would dial carries', async () => {
    // Each form parses (WHATWG URL, as the job dials it) to user u5er and a password with s3 and cret.
    const forms = ['http:/u5er:s3cret@h/db', ' http://u5er:s3cret@h/db', 'http:\\\\u5er:s3cret@h/db', 'ht\ttp://u5er:s3cret@h/db', 'http://u5er:s3@cret@h/db', 'HTTP://u5er:s3cret@h/db'];
    for (const form of forms) assert.equal(new URL(form).username, 'u5er', `${JSON.stringify(form)} dials with credentials`);
    for (const [i, form] of forms.entries()) {
      // `failed` documents are stored as written (no job runs), like a job that failed before.
      const body = { source: form, target: { url: form, headers: { Authorization: 'Basic dTVlcjpzM2NyZXQ=' } }, proxy: form, _replication_state: 'failed' };
      assert.equal((await server.admin(`/_replicator/form${i}`, { method: 'PUT', body })).status, 201);
      const read = await server.request(`/_replicator/form${i}`, { auth: ann });
      assert.equal(read.status, 200, read.text);
      for (const secret of ['u5er', 's3', 'cret', 'dTVlcjpzM2NyZXQ']) assert.ok(!read.text.includes(secret), `${JSON.stringify(form)} shown as ${read.text}`);
      assert.equal(read.body.source, 'http://h/db', `${JSON.stringify(form)} is shown as the URL that is dialled`);
      assert.deepEqual(read.body.target, { url: 'http://h/db' });
    }
    const own = await server.admin('/_replicator/form0');
    assert.equal(own.body.source, forms[0], 'the owner and admins read the document as written');
  });

  test('issue 32 item 4: client-address headers in an endpoint answer 400, so password guesses through the replicator share one lockout bucket', async () => {
    await createUser(server, 'vic', 'vic-pass');
    const members = { admins: { names: [], roles: [] }, members: { names: ['vic'], roles: [] } };
    for (const db of ['vicdb', 'vicdb2']) {
      assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
      assert.equal((await server.admin(`/${db}/_security`, { method: 'PUT', body: members })).status, 200);
    }
    const endpoint = (db: string, password: string, headers: Record<string, string> = {}) => ({ url: `${server.url}/${db}`, auth: { basic: { username: 'vic', password } }, headers });
    const guess = (password: string, headers?: Record<string, string>) =>
      server.request('/_replicate', { method: 'POST', auth: ann, body: { source: endpoint('vicdb', password, headers), target: endpoint('vicdb2', password, headers) } });
    for (const name of ['X-Forwarded-For', 'x-forwarded-host', 'Forwarded', 'X-Real-IP']) {
      const res = await guess('wrong', { [name]: freshAddress() });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.equal(res.body.error, 'bad_request');
      assert.match(res.body.reason, /not from a proxy/);
    }
    const first = await guess('vic-pass');
    assert.equal(first.status, 200, `the right password replicates: ${first.text}`);
    for (let i = 1; i <= 5; i++) assert.equal((await guess(`wrong-${i}`)).status, 401, `guess ${i}`);
    const right = await guess('vic-pass');
    assert.equal(right.status, 401, `after five failures the right password no longer answers differently: ${right.text}`);
    assert.equal((await postSession(server, 'vic', 'vic-pass', fromAddress(freshAddress()))).status, 200, 'vic still logs in from elsewhere');
  });
});
