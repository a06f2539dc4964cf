import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';
import { basicHeader, createUser, FAST_INI, NO_LOCKOUT_INI } from '../support/users-helpers.js';

/** `_changes?filter=ddoc/name`: the design document's JavaScript filter runs for every feed type. */
describe('filter functions in _changes', () => {
  let server: TestServer;
  const member = { headers: { Authorization: basicHeader('mia', 'mia-pass') } };
  const filters = {
    by_type: 'function (doc, req) { return doc.type === req.query.type; }',
    mine: 'function (doc, req) { return doc.owner === req.userCtx.name; }',
    echo: 'function (doc, req) { if (doc._id !== "n1") return false; log(JSON.stringify(req)); throw new Error(JSON.stringify(req)); }',
    deleted: 'function (doc) { return !!doc._deleted; }',
    req: 'function (doc, req) { return doc._id === "n1" && req.method === "GET" && req.path.join("/") === "feeds/_changes" && req.userCtx.db === "feeds" && req.secObj.members.names[0] === "mia" && req.info.db_name === "feeds" && req.body === "undefined" && !req.headers.Authorization && typeof req.uuid === "string" && req.peer === "127.0.0.1"; }',
    loops: 'function (doc) { if (doc._id === "t1") while (true) {} return doc.type === "task"; }',
  };

  before(async () => {
    server = await startServer({ ini: `${FAST_INI}${NO_LOCKOUT_INI}[couchdb]\nos_process_timeout = 300\n` });
    await createUser(server, 'mia', 'mia-pass');
    await server.admin('/feeds', { method: 'PUT' });
    await server.admin('/feeds/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['mia'], roles: [] } } });
    const saved = await server.admin('/feeds/_design/app', { method: 'PUT', body: { filters } });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    for (const [id, body] of [['n1', { type: 'note', owner: 'mia' }], ['t1', { type: 'task', owner: 'bob' }], ['n2', { type: 'note', owner: 'bob' }], ['t2', { type: 'task', owner: 'mia' }]] as const) {
      assert.equal((await server.admin(`/feeds/${id}`, { method: 'PUT', body })).status, 201);
    }
    const gone = await server.admin('/feeds/gone', { method: 'PUT', body: { type: 'note' } });
    await server.admin(`/feeds/gone?rev=${gone.body.rev}`, { method: 'DELETE' });
  });
  after(async () => server.close());

  const ids = (body: { results: { id: string }[] }): string[] => body.results.map((row) => row.id);

  test('normal feed: the function decides with req.query and req.userCtx', async () => {
    assert.deepEqual(ids((await server.admin('/feeds/_changes?filter=app/by_type&type=note')).body), ['n1', 'n2']);
    assert.deepEqual(ids((await server.request('/feeds/_changes?filter=app/mine', member)).body), ['n1', 't2']);
    assert.deepEqual(ids((await server.admin('/feeds/_changes?filter=app/deleted')).body), ['gone']);
  });

  test('req carries CouchDB\'s fields without the caller\'s credentials', async () => {
    assert.deepEqual(ids((await server.request('/feeds/_changes?filter=app/req', member)).body), ['n1']);
  });

  test('longpoll, continuous and eventsource feeds filter the same way', async () => {
    const longpoll = await server.admin('/feeds/_changes?feed=longpoll&filter=app/by_type&type=task');
    assert.deepEqual(ids(longpoll.body), ['t1', 't2']);
    const continuous = await server.admin('/feeds/_changes?feed=continuous&timeout=50&filter=app/by_type&type=task');
    const lines = String(continuous.text).trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines.filter((line) => line.id).map((line) => line.id), ['t1', 't2']);
    const events = await server.admin('/feeds/_changes?feed=eventsource&timeout=50&filter=app/by_type&type=note');
    assert.deepEqual([...String(events.text).matchAll(/"id":"([^"]+)"/g)].map((match) => match[1]), ['n1', 'n2']);
  });

  test('a filter that runs out of time leaves its documents out; the feed answers', async () => {
    const res = await server.admin('/feeds/_changes?filter=app/loops');
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ['t2']);
  });

  test('a filter that throws fails the request with the error it threw, as CouchDB (PouchDB #3356)', async () => {
    const res = await server.admin('/feeds/_changes?filter=app/echo');
    assert.equal(res.status, 500);
    assert.equal(res.body.error, 'Error');
    assert.equal(typeof res.body.reason, 'string');
  });
});
