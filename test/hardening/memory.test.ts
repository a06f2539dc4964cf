/**
 * A client must not make the server keep its request headers. Caches keyed by a piece of a header
 * (a cookie value, a client address) can hold the whole header alive when the key is a V8 sliced
 * string: 10000 entries of a 60 KiB header each are 600 MiB. Each test sends 1500 requests whose
 * big headers each carry a distinct key for one bounded cache, and checks the JS heap (after a full
 * GC) grew by far less than the headers' total size. Found by the soak's heap snapshots.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';

import { basicValue, raw } from '../support/hardening.js';
import { startServer, type TestServer } from '../support/server.js';
import { handMadeCookie, hexTime } from '../support/session-helpers.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const REQUESTS = 1500;
const PAD = 'p'.repeat(60_000);

function heapUsedMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1048576;
}

describe('bounded caches do not keep request headers alive', () => {
  let server: TestServer;
  let port: number;
  let secret: string;
  let salt: string;

  before(async () => {
    server = await startServer({ ini: '[chttpd_auth]\niterations = 1000\ntimeout = 1000000\n[chttpd_auth_lockout]\nthreshold = 1000\n' });
    port = Number(new URL(server.url).port);
    const created = await server.admin('/_users/org.couchdb.user:bob', { method: 'PUT', body: { name: 'bob', password: 'bob-pass', roles: [], type: 'user' } });
    assert.equal(created.status, 201);
    assert.equal((await server.request('/_session', { method: 'POST', body: { name: 'bob', password: 'bob-pass' } })).status, 200);
    secret = server.app.config.authString('secret', '');
    salt = (await server.admin('/_users/org.couchdb.user:bob')).body.salt;
  });

  after(async () => server.close());

  test(`${REQUESTS} distinct genuine cookies, each in a 60 KiB Cookie header: the verified-cookie cache keeps the values, not the headers`, async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const before = heapUsedMiB();
    for (let i = 0; i < REQUESTS; i++) {
      const value = handMadeCookie('bob', hexTime(now - i), secret, salt);
      const res = await raw(port, { target: '/_session', headers: [['Cookie', `AuthSession=${value}; pad=${PAD}`]] });
      assert.equal(res.json?.userCtx?.name, 'bob', `cookie ${i}`);
    }
    const growth = heapUsedMiB() - before;
    t.diagnostic(`heap growth after ${REQUESTS} requests with ${(REQUESTS * PAD.length / 1048576).toFixed(0)} MiB of headers: ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `the heap grew by ${growth.toFixed(1)} MiB`);
  });

  test(`${REQUESTS} failed logins behind a trusted proxy, each X-Forwarded-For 60 KiB long: lockout keeps the address, not the header`, async (t) => {
    const before = heapUsedMiB();
    for (let i = 0; i < REQUESTS; i++) {
      // A proxy appends the real client address to whatever the client sent.
      const forwarded = `${PAD}, 2001:db8:0:0:0:0:${(i >> 16) & 0xffff}:${(i & 0xffff).toString(16)}`;
      const res = await raw(port, { target: '/_session', headers: [['Authorization', basicValue('bob', `wrong-${i}`)], ['X-Forwarded-For', forwarded]] });
      assert.equal(res.status, 401);
    }
    const growth = heapUsedMiB() - before;
    t.diagnostic(`heap growth after ${REQUESTS} lockout entries with ${(REQUESTS * PAD.length / 1048576).toFixed(0)} MiB of headers: ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `the heap grew by ${growth.toFixed(1)} MiB`);
  });

  test(`${REQUESTS} anonymous Basic requests with unknown names and 40 KiB passwords: the user cache keeps names, not credentials`, async (t) => {
    const before = heapUsedMiB();
    for (let i = 0; i < REQUESTS; i++) {
      const res = await raw(port, { target: '/_session', headers: [['Authorization', basicValue(`nobody-with-a-long-name-${i}`, PAD.slice(0, 40_000))]] });
      assert.equal(res.status, 401);
    }
    const growth = heapUsedMiB() - before;
    t.diagnostic(`heap growth after ${REQUESTS} unknown Basic names: ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `the heap grew by ${growth.toFixed(1)} MiB`);
  });

  test(`${REQUESTS} anonymous logins with unknown names in 60 KiB JSON bodies: user cache and lockout keep names, not bodies`, async (t) => {
    const before = heapUsedMiB();
    for (let i = 0; i < REQUESTS; i++) {
      const body = JSON.stringify({ name: `nobody-with-a-long-name-${i}`, password: 'x', pad: PAD });
      const res = await raw(port, { method: 'POST', target: '/_session', headers: [['Content-Type', 'application/json']], body });
      assert.equal(res.status, 401);
    }
    const growth = heapUsedMiB() - before;
    t.diagnostic(`heap growth after ${REQUESTS} unknown logins: ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `the heap grew by ${growth.toFixed(1)} MiB`);
  });

  test('the winning-revision cache counts revision histories in its size bound', async (t) => {
    assert.equal((await server.admin('/hist', { method: 'PUT' })).status, 201);
    // 1500 documents with 1000 ancestors each (the revs_limit), written as a replicator would.
    const ids = (n: number): string[] => Array.from({ length: 1000 }, (_, k) => (n * 1000 + 1000 - k).toString(16).padStart(32, '0'));
    for (let batch = 0; batch < 30; batch++) {
      const docs = Array.from({ length: 50 }, (_, k) => {
        const n = batch * 50 + k;
        return { _id: `h${n}`, _rev: `1000-${ids(n)[0]}`, _revisions: { start: 1000, ids: ids(n) }, n };
      });
      const res = await server.admin('/hist/_bulk_docs', { method: 'POST', body: { docs, new_edits: false } });
      assert.equal(res.status, 201, res.text.slice(0, 200));
    }
    const before = heapUsedMiB();
    for (let n = 0; n < 1500; n++) assert.equal((await raw(port, { target: `/hist/h${n}`, headers: [['Authorization', basicValue('root', 'r00t-pass')]] })).status, 200);
    const growth = heapUsedMiB() - before;
    t.diagnostic(`heap growth after reading 1500 documents of 1000 revisions: ${growth.toFixed(1)} MiB (cache bound 32 MiB)`);
    assert.ok(growth < 56, `the heap grew by ${growth.toFixed(1)} MiB`);
  });

  test('the verified-password cache keeps no plaintext password alive (long names make sliced strings)', async () => {
    const name = 'a-user-with-a-rather-long-name';
    const password = `plaintext-${Math.random().toString(36).slice(2)}-needle`;
    assert.equal((await server.admin(`/_users/org.couchdb.user:${name}`, { method: 'PUT', body: { name, password, roles: [], type: 'user' } })).status, 201);
    for (let i = 0; i < 3; i++) assert.equal((await raw(port, { target: '/_session', headers: [['Authorization', basicValue(name, password)]] })).json?.userCtx?.name, name);
    const login = await raw(port, { method: 'POST', target: '/_session', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ name, password }) });
    assert.equal(login.status, 200);
    gc();
    gc();
    const snapshot = v8.getHeapSnapshot();
    const chunks: Buffer[] = [];
    for await (const chunk of snapshot) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const strings = (JSON.parse(text) as { strings: string[] }).strings;
    const holding = strings.filter((value) => value.includes(password) && value !== password);
    // The test's own `password` constant is the one string allowed to hold it.
    assert.deepEqual(holding.map((value) => value.slice(0, 80)), [], 'no request string holding the password survives');
    assert.ok(strings.filter((value) => value === password).length <= 1, 'only the test keeps the password');
  });
});
