// `_changes` feeds as replicators use them: normal, longpoll, continuous, eventsource; heartbeats,
// timeouts, filters, the end of a feed at changes_timeout and at the expiry of its credentials.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { latencyBound, slowestOf } from '../support/latency-bound.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, loginCookie, NO_LOCKOUT_INI, setConfig } from '../support/users-helpers.js';
import { feedLines, openFeed, rev, replicated, sleep } from './replication-support.js';
import { bareSeqs, bareSeqText, seqNumber } from '../support/sequences.js';

async function put(server: TestServer, db: string, id: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.admin(`/${db}/${id.split('/').map(encodeURIComponent).join('/')}`, { method: 'PUT', body });
  assert.equal(res.status, 201, res.text);
  return res.body.rev as string;
}

async function freshDb(server: TestServer, db: string, members: string[] = []): Promise<void> {
  assert.equal((await server.admin(`/${db}`, { method: 'PUT' })).status, 201);
  const security = { admins: { names: [], roles: [] }, members: { names: members, roles: [] } };
  assert.equal((await server.admin(`/${db}/_security`, { method: 'PUT', body: security })).status, 200);
}

describe('_changes feeds', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    await createUser(server, 'member', 'member-pass');
    await createUser(server, 'outsider', 'outsider-pass');
  });
  after(async () => server.close());

  test('continuous: existing rows, then live rows as JSON lines, then {last_seq, pending} when limit is reached', async () => {
    await freshDb(server, 'cont');
    await put(server, 'cont', 'a');
    const feed = openFeed(server.url, '/cont/_changes?feed=continuous&limit=3&heartbeat=100', { auth: ADMIN });
    await feed.waitFor((text) => text.includes('"id":"a"'));
    await put(server, 'cont', 'b');
    await feed.waitFor((text) => text.includes('"id":"b"'));
    await put(server, 'cont', 'c');
    const result = await feed.done;
    assert.equal(result.status, 200);
    assert.equal(result.headers['content-type'], 'application/json');
    assert.equal(result.headers['transfer-encoding'], 'chunked');
    const lines = bareSeqs(feedLines(result.text));
    assert.deepEqual(lines.map((line) => line['id'] ?? line), ['a', 'b', 'c', { last_seq: '3', pending: 0 }]);
    assert.deepEqual(Object.keys(lines[0]!), ['seq', 'id', 'changes']);
    assert.ok(result.chunks.length >= 3, 'rows arrive as they happen, not in one chunk at the end');
  });

  test('feed=live is continuous; an unknown feed is refused with CouchDB reason', async () => {
    await freshDb(server, 'live');
    await put(server, 'live', 'x');
    const live = await openFeed(server.url, '/live/_changes?feed=live&limit=1', { auth: ADMIN }).done;
    assert.deepEqual(bareSeqs(feedLines(live.text)).map((line) => line['id'] ?? line['last_seq']), ['x', '1']);
    const bad = await server.admin('/live/_changes?feed=sometimes');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'bad_request', reason: 'Supported `feed` types: normal, continuous, live, longpoll, eventsource' });
  });

  test('longpoll waits for the next change and answers it in CouchDB layout', async () => {
    await freshDb(server, 'lp');
    await put(server, 'lp', 'old');
    const feed = openFeed(server.url, '/lp/_changes?feed=longpoll&since=now', { auth: ADMIN });
    await sleep(300);
    assert.equal(feed.text(), '{"results":[\n\n', 'status, headers and the opening go out while waiting, as CouchDB');
    const written = await put(server, 'lp', 'new', { v: 1 });
    const result = await feed.done;
    assert.ok(result.elapsed >= 300);
    assert.equal(bareSeqText(result.text), `{"results":[\n\n{"seq":"2","id":"new","changes":[{"rev":"${written}"}]}\n],\n"last_seq":"2","pending":0}\n`);
    // With rows already there, longpoll answers at once, like the normal feed.
    const immediate = await openFeed(server.url, '/lp/_changes?feed=longpoll&since=0', { auth: ADMIN }).done;
    assert.deepEqual(JSON.parse(immediate.text).results.map((row: { id: string }) => row.id), ['old', 'new']);
  });

  test('longpoll with a heartbeat sends newlines inside the results array, then an empty answer at timeout', async () => {
    await freshDb(server, 'lphb');
    const feed = await openFeed(server.url, '/lphb/_changes?feed=longpoll&since=now&heartbeat=100&timeout=50', { auth: ADMIN });
    await feed.waitFor((text) => text.startsWith('{"results":[\n\n'), 2000);
    feed.abort();
    // timeout without heartbeat ends a quiet longpoll with no results.
    const quiet = await openFeed(server.url, '/lphb/_changes?feed=longpoll&timeout=200', { auth: ADMIN }).done;
    assert.ok(quiet.elapsed >= 190 && quiet.elapsed < 15000, `ended after ${quiet.elapsed} ms`);
    assert.deepEqual(bareSeqs(JSON.parse(quiet.text)), { results: [], last_seq: '0', pending: 0 });
  });

  test('heartbeats keep a quiet continuous feed alive; timeout alone ends it', async () => {
    await freshDb(server, 'hb');
    const beating = openFeed(server.url, '/hb/_changes?feed=continuous&heartbeat=100&timeout=150', { auth: ADMIN });
    await sleep(650);
    const text = beating.text();
    assert.ok((text.match(/\n/g) ?? []).length >= 4, `expected several heartbeats, got ${JSON.stringify(text)}`);
    assert.equal(text.trim(), '', 'heartbeats are bare newlines');
    beating.abort();
    const idle = await openFeed(server.url, '/hb/_changes?feed=continuous&timeout=200', { auth: ADMIN }).done;
    assert.ok(idle.elapsed >= 190 && idle.elapsed < 15000, `ended after ${idle.elapsed} ms`);
    assert.deepEqual(bareSeqs(feedLines(idle.text)), [{ last_seq: '0', pending: 0 }]);
  });

  test('eventsource: data/id events, heartbeat events, Last-Event-ID resumes', async () => {
    await freshDb(server, 'es');
    const first = await put(server, 'es', 'one');
    await put(server, 'es', 'two');
    const feed = openFeed(server.url, '/es/_changes?feed=eventsource&heartbeat=100', { auth: ADMIN });
    const head = await feed.head;
    assert.equal(head.headers['content-type'], 'text/event-stream');
    assert.equal(head.headers['cache-control'], 'no-cache');
    const text = await feed.waitFor((t) => t.includes('event: heartbeat'));
    feed.abort();
    assert.ok(bareSeqText(text).startsWith(`data: {"seq":"1","id":"one","changes":[{"rev":"${first}"}]}\nid: "1"\n\ndata: `), JSON.stringify(text));
    assert.ok(text.includes('event: heartbeat\ndata: \n\n'));
    const resumed = openFeed(server.url, '/es/_changes?feed=eventsource&timeout=100', { auth: ADMIN, headers: { 'Last-Event-ID': '"1"' } });
    const result = await resumed.done;
    assert.ok(!result.text.includes('"id":"one"'), 'Last-Event-ID overrides since');
    assert.ok(result.text.includes('"id":"two"'));
  });

  test('errors before the first byte are ordinary JSON error replies', async () => {
    const missing = await openFeed(server.url, '/nowhere/_changes?feed=continuous', { auth: ADMIN }).done;
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.text), { error: 'not_found', reason: 'Database does not exist.' });
    await freshDb(server, 'private', ['member']);
    const anonymous = await openFeed(server.url, '/private/_changes?feed=continuous').done;
    assert.equal(anonymous.status, 401);
    const outsider = await openFeed(server.url, '/private/_changes?feed=longpoll', { auth: ['outsider', 'outsider-pass'] }).done;
    assert.equal(outsider.status, 403);
    const member = await openFeed(server.url, '/private/_changes?feed=continuous&timeout=10', { auth: ['member', 'member-pass'] }).done;
    assert.equal(member.status, 200);
    for (const [query, reason] of [
      ['heartbeat=0', 'The heartbeat value should be a positive integer (in milliseconds).'],
      ['heartbeat=soon', 'Invalid heartbeat value. Expecting a positive integer value (in milliseconds).'],
      ['timeout=-1', 'The timeout value should be a non-negative integer'],
      ['filter=_bogus', 'unknown builtin filter name'],
      ['filter=_doc_ids&doc_ids={}', '`doc_ids` filter parameter is not a list of doc ids.'],
      ['filter=_selector', 'Selector must be specified in POST payload'],
    ]) {
      const res = await openFeed(server.url, `/private/_changes?feed=continuous&${query}`, { auth: ADMIN }).done;
      assert.equal(res.status, 400, query);
      assert.deepEqual(JSON.parse(res.text), { error: 'bad_request', reason }, query);
    }
  });

  test('a filter or _view function is looked up first, as CouchDB: a missing design document or member is 404', async () => {
    await freshDb(server, 'lookups');
    await server.admin('/lookups/_design/app', { method: 'PUT', body: { filters: { mine: 'function (doc) { return true; }' }, views: 'not an object' } });
    await server.admin('/lookups/_design/nofilters', { method: 'PUT', body: {} });
    for (const [query, status, error, reason] of [
      ['filter=nodesign/mine', 404, 'not_found', 'missing'],
      ['filter=nofilters/mine', 404, 'not_found', 'missing json key: filters'],
      ['filter=app/other', 404, 'not_found', 'missing json key: other'],
      ['filter=_view&view=app/by_type', 404, 'not_found', 'json_mismatch'],
      ['filter=_view&view=nodesign/by_type', 404, 'not_found', 'missing'],
      ['filter=_view', 400, 'bad_request', '`view` filter parameter is not provided.'],
    ] as const) {
      const res = await server.admin(`/lookups/_changes?${query}`);
      assert.deepEqual([res.status, res.body], [status, { error, reason }], query);
    }
    assert.equal((await server.admin('/lookups/_changes?filter=app/mine')).status, 200, 'a filter that exists runs');
  });

  test('_doc_ids (GET and POST), _selector and _design filters; limit counts the rows sent', async () => {
    await freshDb(server, 'filtered');
    for (const [id, body] of [
      ['a', { type: 'note' }],
      ['b', { type: 'task' }],
      ['_design/app', {}],
      ['c', { type: 'note' }],
      ['d', { type: 'task' }],
    ] as const) {
      await put(server, 'filtered', id, body);
    }
    const ids = await server.admin('/filtered/_changes?filter=_doc_ids&doc_ids=%5B%22d%22%2C%22a%22%5D');
    assert.deepEqual(ids.body.results.map((row: { id: string }) => row.id), ['a', 'd']);
    assert.equal(seqNumber(ids.body.last_seq), 5);
    const posted = await server.admin('/filtered/_changes?filter=_doc_ids&limit=1', { method: 'POST', body: { doc_ids: ['c', 'd'] } });
    assert.deepEqual(posted.body.results.map((row: { id: string }) => row.id), ['c']);
    assert.equal(seqNumber(posted.body.last_seq), 4, 'with a limit, last_seq is the last row sent');
    const selector = await server.admin('/filtered/_changes?filter=_selector&include_docs=true', { method: 'POST', body: { selector: { type: 'task' } } });
    assert.deepEqual(selector.body.results.map((row: { id: string; doc: { type: string } }) => [row.id, row.doc.type]), [['b', 'task'], ['d', 'task']]);
    assert.equal(seqNumber(selector.body.last_seq), 5, 'without a limit, last_seq is the end of the scan');
    const design = await server.admin('/filtered/_changes?filter=_design');
    assert.deepEqual(design.body.results.map((row: { id: string }) => row.id), ['_design/app']);
    const liveSelector = openFeed(server.url, '/filtered/_changes?feed=continuous&since=now&filter=_selector&limit=1', {
      auth: ADMIN,
      method: 'POST',
      body: { selector: { type: 'note' } },
    });
    await sleep(100);
    await put(server, 'filtered', 'e', { type: 'task' });
    await put(server, 'filtered', 'f', { type: 'note' });
    const live = await liveSelector.done;
    assert.deepEqual(bareSeqs(feedLines(live.text)).map((line) => line['id'] ?? line['last_seq']), ['f', '7']);
    const badSelector = await server.admin('/filtered/_changes?filter=_selector', { method: 'POST', body: { selector: { type: { $nope: 1 } } } });
    assert.deepEqual(badSelector.body, { error: 'bad_request', reason: 'Invalid operator: $nope' });
  });

  test('style=all_docs lists every leaf; conflicts=true adds _conflicts to included docs', async () => {
    await freshDb(server, 'styles');
    const a1 = rev(1, 'a');
    const b2 = rev(2, 'b');
    const c2 = rev(2, 'c');
    const res = await server.admin('/styles/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [replicated('doc', [b2, a1], { v: 'b' }), replicated('doc', [c2, a1], { v: 'c' })] },
    });
    assert.equal(res.status, 201, res.text);
    const main = await server.admin('/styles/_changes');
    assert.deepEqual(main.body.results[0].changes, [{ rev: c2 }]);
    const all = await server.admin('/styles/_changes?style=all_docs&include_docs=true&conflicts=true');
    assert.deepEqual(all.body.results[0].changes, [{ rev: c2 }, { rev: b2 }]);
    assert.deepEqual(all.body.results[0].doc, { _id: 'doc', _rev: c2, v: 'c', _conflicts: [b2] });
    const selected = await server.admin('/styles/_changes?style=all_docs&filter=_selector', { method: 'POST', body: { selector: { v: 'b' } } });
    assert.deepEqual(selected.body.results[0].changes, [{ rev: b2 }], 'each leaf is matched on its own body');
  });

  test('[chttpd] changes_timeout ends a feed even while heartbeats flow', async () => {
    await freshDb(server, 'capped');
    await setConfig(server, 'chttpd', 'changes_timeout', '700');
    try {
      const feed = await openFeed(server.url, '/capped/_changes?feed=continuous&heartbeat=100', { auth: ADMIN }).done;
      assert.ok(feed.ended, 'the server ended the response');
      assert.ok(feed.elapsed >= 650 && feed.elapsed < 15000, `ended after ${feed.elapsed} ms`);
      assert.deepEqual(bareSeqs(feedLines(feed.text)), [{ last_seq: '0', pending: 0 }]);
      const longpoll = await openFeed(server.url, '/capped/_changes?feed=longpoll&timeout=600000', { auth: ADMIN }).done;
      assert.ok(longpoll.elapsed < 15000, `a longer timeout is capped (ended after ${longpoll.elapsed} ms)`);
    } finally {
      await setConfig(server, 'chttpd', 'changes_timeout', '60000');
    }
  });

  test('many open feeds do not starve other requests, and one write reaches all of them', async () => {
    await freshDb(server, 'crowd');
    const thirtyRequests = async (): Promise<void> => {
      for (let i = 0; i < 30; i++) await server.admin('/crowd');
    };
    const idleMs = await slowestOf(thirtyRequests, 1);
    const feeds = Array.from({ length: 150 }, () => openFeed(server.url, '/crowd/_changes?feed=continuous&since=now&heartbeat=50', { auth: ADMIN }));
    try {
      await Promise.all(feeds.map((feed) => feed.head));
      const started = Date.now();
      const slowest: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t0 = Date.now();
        const res = await server.admin('/crowd');
        assert.equal(res.status, 200);
        slowest.push(Date.now() - t0);
      }
      const bound = latencyBound(idleMs, 5000);
      assert.ok(Date.now() - started < bound, `30 requests took ${Date.now() - started} ms next to 150 feeds (${idleMs.toFixed(0)} ms without them)`);
      const rev1 = await put(server, 'crowd', 'hello');
      await Promise.all(feeds.map((feed) => feed.waitFor((text) => text.includes(rev1), 10000)));
    } finally {
      for (const feed of feeds) feed.abort();
    }
  });
});

describe('feeds end when the credentials that opened them expire', () => {
  const SECRET = Buffer.from('feed-test-hmac-secret-0123456789abcdef');
  let server: TestServer;
  before(async () => {
    server = await startServer({
      ini: [
        FAST_INI + NO_LOCKOUT_INI,
        '[chttpd_auth]',
        'timeout = 2',
        '[chttpd]',
        'authentication_handlers = {chttpd_auth, jwt_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}',
        '[jwt_keys]',
        `hmac:_default = ${SECRET.toString('base64')}`,
      ].join('\n'),
    });
    await createUser(server, 'ann', 'ann-pass');
    await freshDb(server, 'mine', ['ann']);
  });
  after(async () => server.close());

  test('a cookie-opened feed ends (with last_seq) when the cookie expires, long before changes_timeout', async () => {
    const cookie = await loginCookie(server, 'ann', 'ann-pass');
    const feed = await openFeed(server.url, '/mine/_changes?feed=continuous&heartbeat=200', { headers: { Cookie: cookie } }).done;
    assert.equal(feed.status, 200);
    assert.ok(feed.ended);
    assert.ok(feed.elapsed < 15000, `ended after ${feed.elapsed} ms (cookie timeout 2 s, changes_timeout 60 s)`);
    assert.deepEqual(bareSeqs(feedLines(feed.text)), [{ last_seq: '0', pending: 0 }]);
    const again = await server.request('/mine/_changes', { headers: { Cookie: cookie } });
    assert.equal(again.status, 401, 'the expired cookie no longer opens the database');
  });

  test('a JWT-opened feed ends at the token exp; Basic-opened feeds run on', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await new SignJWT({ sub: 'ann', exp }).setProtectedHeader({ alg: 'HS256' }).sign(SECRET);
    const jwtFeed = openFeed(server.url, '/mine/_changes?feed=continuous&heartbeat=200', { headers: { Authorization: `Bearer ${token}` } });
    const basicFeed = openFeed(server.url, '/mine/_changes?feed=continuous&heartbeat=200', { auth: ['ann', 'ann-pass'] });
    const jwtResult = await jwtFeed.done;
    assert.equal(jwtResult.status, 200);
    assert.ok(jwtResult.elapsed < 15000, `ended after ${jwtResult.elapsed} ms (exp in ≤ 2 s, changes_timeout 60 s)`);
    assert.deepEqual(bareSeqs(feedLines(jwtResult.text)), [{ last_seq: '0', pending: 0 }]);
    await sleep(300);
    assert.equal(basicFeed.text().trim(), '', 'the Basic feed is still open, sending heartbeats');
    basicFeed.abort();
  });
});

describe('shutting down', () => {
  test('open feeds end with their last line instead of being cut', async () => {
    const server = await startServer();
    await freshDb(server, 'bye');
    const feed = openFeed(server.url, '/bye/_changes?feed=continuous&heartbeat=100', { auth: ADMIN });
    await feed.head;
    const t0 = Date.now();
    await server.close();
    const result = await feed.done;
    assert.ok(Date.now() - t0 < 15000, 'close did not wait for the feed to time out (60 s)');
    assert.ok(result.ended);
    assert.deepEqual(bareSeqs(feedLines(result.text)), [{ last_seq: '0', pending: 0 }]);
  });
});

describe('feeds on a cluster (two nodes on one PostgreSQL)', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const schema = uniqueSchema();
  let nodeA: TestServer;
  let nodeB: TestServer;
  before(async () => {
    const ini = ['[divan]', 'storage = postgres', `postgres_url = ${POSTGRES_TEST_URL}`, `postgres_schema = ${schema}`].join('\n');
    nodeA = await startServer({ ini });
    nodeB = await startServer({ ini });
  });
  after(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await dropSchema(POSTGRES_TEST_URL!, schema);
  });

  test('a write through node B wakes a continuous feed and a longpoll open on node A', async () => {
    await freshDb(nodeA, 'shared');
    const continuous = openFeed(nodeA.url, '/shared/_changes?feed=continuous&since=now&limit=1&heartbeat=200', { auth: ADMIN });
    const longpoll = openFeed(nodeA.url, '/shared/_changes?feed=longpoll&since=now', { auth: ADMIN });
    await Promise.all([continuous.head, sleep(200)]);
    const written = await put(nodeB, 'shared', 'from-b');
    const [c, l] = await Promise.all([continuous.done, longpoll.done]);
    assert.ok(c.elapsed < 15000 && l.elapsed < 15000, 'woken by the bus, not by a timeout (60 s)');
    assert.deepEqual(bareSeqs(feedLines(c.text))[0], { seq: '1', id: 'from-b', changes: [{ rev: written }] });
    assert.deepEqual(JSON.parse(l.text).results.map((row: { id: string }) => row.id), ['from-b']);
  });
});
