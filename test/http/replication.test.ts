// The replication protocol's document endpoints: _revs_diff, _bulk_get, open_revs, _bulk_docs with
// new_edits=false, _local checkpoints, _ensure_full_commit; and authorization on each of them.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { createUser, FAST_INI, NO_LOCKOUT_INI, userBody, USER_PREFIX } from '../support/users-helpers.js';
import { rev, replicated } from './replication-support.js';
import { seqNumber } from '../support/sequences.js';

const MEMBER: [string, string] = ['member', 'member-pass'];
const OUTSIDER: [string, string] = ['outsider', 'outsider-pass'];
const DB_ADMIN: [string, string] = ['owner', 'owner-pass'];

const A1 = rev(1, 'a');
const B2 = rev(2, 'b');
const C2 = rev(2, 'c');
const D3 = rev(3, 'd');

describe('replication endpoints', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    for (const [name, password] of [MEMBER, OUTSIDER, DB_ADMIN]) await createUser(server, name, password);
    assert.equal((await server.admin('/repl', { method: 'PUT' })).status, 201);
    const security = { admins: { names: ['owner'], roles: [] }, members: { names: ['member'], roles: [] } };
    assert.equal((await server.admin('/repl/_security', { method: 'PUT', body: security })).status, 200);
    // doc: 1-a ─┬─ 2-b ── 3-d   and   └─ 2-c (a conflict)
    const res = await server.admin('/repl/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [replicated('doc', [D3, B2, A1], { v: 'd' }), replicated('doc', [C2, A1], { v: 'c' })] },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, [], 'new_edits=false answers only errors');
  });
  after(async () => server.close());

  test('_bulk_docs new_edits=false keeps both branches; the longer one wins, the other is a conflict', async () => {
    const doc = await server.request('/repl/doc?conflicts=true&revs=true', { auth: MEMBER });
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.body, {
      _id: 'doc',
      _rev: D3,
      v: 'd',
      _revisions: { start: 3, ids: ['d'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)] },
      _conflicts: [C2],
    });
    const info = await server.request('/repl', { auth: MEMBER });
    assert.equal(seqNumber(info.body.update_seq), 2, 'sequences are opaque strings, N-<opaque> as CouchDB 3');
  });

  test('the same revisions arriving in another order give the same winner (CouchDB: generation, then hash)', async () => {
    await server.admin('/order1', { method: 'PUT' });
    await server.admin('/order2', { method: 'PUT' });
    const e2 = rev(2, 'e');
    const f2 = rev(2, 'f');
    const docs = [replicated('x', [e2, A1], { from: 'e' }), replicated('x', [f2, A1], { from: 'f' })];
    await server.admin('/order1/_bulk_docs', { method: 'POST', body: { new_edits: false, docs } });
    await server.admin('/order2/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [...docs].reverse() } });
    for (const db of ['order1', 'order2']) {
      const doc = await server.admin(`/${db}/x?conflicts=true`);
      assert.deepEqual([doc.body._rev, doc.body.from, doc.body._conflicts], [f2, 'f', [e2]], db);
    }
    const put = await server.admin(`/order1/x?new_edits=false`, { method: 'PUT', body: replicated('x', [rev(3, '1'), e2, A1], { from: 'put' }) });
    assert.equal(put.status, 201);
    assert.equal(put.body.rev, rev(3, '1'));
    assert.equal((await server.admin('/order1/x')).body._rev, rev(3, '1'), 'a longer branch wins over a higher hash');
  });

  test('_revs_diff names what is missing, with possible ancestors', async () => {
    const res = await server.request('/repl/_revs_diff', {
      method: 'POST',
      auth: MEMBER,
      body: { doc: [D3, rev(4, 'e'), C2], other: [A1], known: [] },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      doc: { missing: [rev(4, 'e')], possible_ancestors: [C2, D3] },
      other: { missing: [A1] },
    });
    const bad = await server.request('/repl/_revs_diff', { method: 'POST', auth: MEMBER, body: { doc: ['nonsense'] } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'bad_request', reason: 'Invalid rev format' }]);
    const get = await server.request('/repl/_revs_diff', { auth: MEMBER });
    assert.equal(get.status, 405);
    const impossible = await server.request('/repl/_revs_diff', { method: 'POST', auth: MEMBER, body: { 'a\u0000b': [A1] } });
    assert.deepEqual([impossible.status, impossible.body], [200, { 'a\u0000b': { missing: [A1] } }], 'an id no document can have is simply unknown');
    const missing = await server.request('/repl/_missing_revs', { method: 'POST', auth: MEMBER, body: { doc: [D3, rev(4, 'e')] } });
    assert.deepEqual(missing.body, { missing_revs: { doc: [rev(4, 'e')] } });
  });

  test('_bulk_get with revs and latest, as PouchDB asks, and its per-document errors', async () => {
    const res = await server.request('/repl/_bulk_get?revs=true&latest=true', {
      method: 'POST',
      auth: MEMBER,
      body: { docs: [{ id: 'doc', rev: B2 }, { id: 'doc' }, { id: 'nope', rev: A1 }, { id: 'doc', rev: 'x' }, { rev: A1 }, 'junk', { id: 'nope' }] },
    });
    assert.equal(res.status, 200, res.text);
    const [latest, all, unknown, badRev, noId, junk, unknownAll] = res.body.results;
    assert.deepEqual(latest, {
      id: 'doc',
      docs: [{ ok: { _id: 'doc', _rev: D3, v: 'd', _revisions: { start: 3, ids: ['d'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)] } } }],
    });
    assert.deepEqual(all.docs.map((item: { ok: { _rev: string } }) => item.ok._rev), [D3, C2]);
    assert.deepEqual(unknown, { id: 'nope', docs: [{ error: { id: 'nope', rev: A1, error: 'not_found', reason: 'missing' } }] });
    assert.deepEqual(badRev, { id: 'doc', docs: [{ error: { id: 'doc', rev: 'x', error: 'bad_request', reason: 'Invalid rev format' } }] });
    assert.deepEqual(noId, { id: null, docs: [{ error: { id: null, rev: null, error: 'bad_request', reason: 'document id missed' } }] });
    assert.deepEqual(junk, { id: null, docs: [{ error: { id: null, rev: null, error: 'bad_request', reason: 'document must be a JSON object' } }] });
    assert.deepEqual(unknownAll, { id: 'nope', docs: [{ error: { id: 'nope', rev: 'undefined', error: 'not_found', reason: 'missing' } }] });
    const withoutLatest = await server.request('/repl/_bulk_get', { method: 'POST', auth: MEMBER, body: { docs: [{ id: 'doc', rev: B2 }] } });
    assert.deepEqual(withoutLatest.body.results[0].docs, [{ error: { id: 'doc', rev: B2, error: 'not_found', reason: 'missing' } }]);
    const refused = await server.request('/repl/_bulk_get?rev=1', { method: 'POST', auth: MEMBER, body: { docs: [] } });
    assert.deepEqual([refused.status, refused.body.reason], [400, '"rev" query parameter is not acceptable']);
    const noDocs = await server.request('/repl/_bulk_get', { method: 'POST', auth: MEMBER, body: {} });
    assert.deepEqual([noDocs.status, noDocs.body.reason], [400, "Missing JSON list of 'docs'."]);
  });

  test('GET ?open_revs: all, a list (missing ones named), latest; JSON or multipart/mixed', async () => {
    const all = await server.request('/repl/doc?open_revs=all', { auth: MEMBER, headers: { Accept: 'application/json' } });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, [{ ok: { _id: 'doc', _rev: D3, v: 'd' } }, { ok: { _id: 'doc', _rev: C2, v: 'c' } }]);
    const list = await server.request(`/repl/doc?revs=true&open_revs=${encodeURIComponent(JSON.stringify([C2, B2]))}`, { auth: MEMBER });
    assert.deepEqual(list.body, [
      { ok: { _id: 'doc', _rev: C2, v: 'c', _revisions: { start: 2, ids: ['c'.repeat(32), 'a'.repeat(32)] } } },
      { missing: B2 },
    ]);
    const latest = await server.request(`/repl/doc?latest=true&open_revs=${encodeURIComponent(JSON.stringify([B2]))}`, { auth: MEMBER });
    assert.deepEqual(latest.body, [{ ok: { _id: 'doc', _rev: D3, v: 'd' } }]);
    const none = await server.request('/repl/nothing?open_revs=all', { auth: MEMBER });
    assert.deepEqual([none.status, none.body], [404, { error: 'not_found', reason: 'missing' }]);
    const badRevs = await server.request('/repl/doc?open_revs=["x"]', { auth: MEMBER });
    assert.equal(badRevs.status, 400);
    const multipart = await server.request(`/repl/doc?open_revs=${encodeURIComponent(JSON.stringify([D3, B2]))}`, {
      auth: MEMBER,
      headers: { Accept: 'multipart/mixed' },
    });
    const boundary = /^multipart\/mixed; boundary="([0-9a-f]+)"$/.exec(String(multipart.headers['content-type']))?.[1];
    assert.ok(boundary, String(multipart.headers['content-type']));
    assert.equal(
      multipart.text,
      `--${boundary}\r\nContent-Type: application/json\r\n\r\n{"_id":"doc","_rev":"${D3}","v":"d"}\r\n--${boundary}` +
        `\r\nContent-Type: application/json; error="true"\r\n\r\n{"missing":"${B2}"}\r\n--${boundary}--`,
    );
  });

  test('_local checkpoints: written and read by members, no sequence, not in _changes', async () => {
    const seqBefore = (await server.admin('/repl')).body.update_seq;
    const created = await server.request('/repl/_local/checkpoint-1', { method: 'PUT', auth: MEMBER, body: { last_seq: '2', session_id: 's' } });
    assert.deepEqual([created.status, created.body.rev], [201, '0-1']);
    const updated = await server.request('/repl/_local/checkpoint-1', { method: 'PUT', auth: MEMBER, body: { _rev: '0-1', last_seq: '3' } });
    assert.equal(updated.body.rev, '0-2');
    const stale = await server.request('/repl/_local/checkpoint-1', { method: 'PUT', auth: MEMBER, body: { _rev: '0-1', last_seq: '4' } });
    assert.equal(stale.status, 409);
    assert.deepEqual((await server.request('/repl/_local/checkpoint-1', { auth: MEMBER })).body, { _id: '_local/checkpoint-1', _rev: '0-2', last_seq: '3' });
    assert.equal((await server.admin('/repl')).body.update_seq, seqBefore);
    const changes = await server.admin('/repl/_changes');
    assert.ok(!changes.body.results.some((row: { id: string }) => row.id.startsWith('_local/')));
    const outsider = await server.request('/repl/_local/checkpoint-1', { auth: OUTSIDER });
    assert.equal(outsider.status, 403);
  });

  test('_ensure_full_commit: 201 for members, POST only', async () => {
    const res = await server.request('/repl/_ensure_full_commit', { method: 'POST', auth: MEMBER, body: {} });
    assert.equal(res.status, 201);
    assert.equal(res.body.ok, true);
    assert.equal(typeof res.body.instance_start_time, 'string');
    assert.equal((await server.request('/repl/_ensure_full_commit', { auth: MEMBER })).status, 405);
    assert.equal((await server.request('/nodb/_ensure_full_commit', { method: 'POST', auth: MEMBER, body: {} })).status, 404);
  });

  test('every replication endpoint: anonymous 401, non-member 403, member allowed', async () => {
    const calls: [string, string, unknown][] = [
      ['GET', '/repl', undefined],
      ['GET', '/repl/_changes?feed=longpoll&timeout=10', undefined],
      ['POST', '/repl/_changes?filter=_doc_ids', { doc_ids: ['doc'] }],
      ['POST', '/repl/_revs_diff', { doc: [A1] }],
      ['POST', '/repl/_bulk_get', { docs: [{ id: 'doc' }] }],
      ['GET', '/repl/doc?open_revs=all', undefined],
      ['POST', '/repl/_bulk_docs', { new_edits: false, docs: [replicated('member-doc', [rev(1, '3')])] }],
      ['GET', '/repl/_local/checkpoint-1', undefined],
      ['POST', '/repl/_ensure_full_commit', {}],
    ];
    for (const [method, path, body] of calls) {
      const anonymous = await server.request(path, { method, body });
      assert.equal(anonymous.status, 401, `anonymous ${method} ${path}: ${anonymous.text}`);
      const outsider = await server.request(path, { method, body, auth: OUTSIDER });
      assert.equal(outsider.status, 403, `outsider ${method} ${path}: ${outsider.text}`);
      const member = await server.request(path, { method, body, auth: MEMBER, headers: { Accept: 'application/json' } });
      assert.ok(member.status >= 200 && member.status < 300, `member ${method} ${path}: ${member.status} ${member.text}`);
    }
  });

  test('replicated design documents need a database admin', async () => {
    const ddoc = replicated('_design/app', [rev(1, '7')], { views: {} });
    const byMember = await server.request('/repl/_bulk_docs', { method: 'POST', auth: MEMBER, body: { new_edits: false, docs: [ddoc] } });
    assert.equal(byMember.status, 201);
    assert.deepEqual(byMember.body, [{ id: '_design/app', error: 'unauthorized', reason: 'You are not a db or server admin.' }]);
    assert.equal((await server.admin('/repl/_design/app')).status, 404, 'nothing was written');
    const putByMember = await server.request('/repl/_design/app?new_edits=false', { method: 'PUT', auth: MEMBER, body: ddoc });
    assert.equal(putByMember.status, 401);
    const byDbAdmin = await server.request('/repl/_bulk_docs', { method: 'POST', auth: DB_ADMIN, body: { new_edits: false, docs: [ddoc] } });
    assert.deepEqual([byDbAdmin.status, byDbAdmin.body], [201, []]);
    assert.equal((await server.request('/repl/_design/app', { auth: MEMBER })).body._rev, rev(1, '7'));
  });
});

describe('replication and the users database', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ini: FAST_INI + NO_LOCKOUT_INI });
    await createUser(server, 'ann', 'ann-pass');
    await createUser(server, 'bob', 'bob-pass');
  });
  after(async () => server.close());

  test('non-admins cannot read _users through any replication endpoint', async () => {
    for (const [method, path, body] of [
      ['GET', '/_users/_changes?feed=continuous', undefined],
      ['POST', '/_users/_revs_diff', { [`${USER_PREFIX}bob`]: [A1] }],
      ['POST', '/_users/_bulk_get', { docs: [{ id: `${USER_PREFIX}bob` }] }],
      ['GET', `/_users/${USER_PREFIX}bob?open_revs=all`, undefined],
      ['POST', '/_users/_bulk_docs', { new_edits: false, docs: [replicated(`${USER_PREFIX}eve`, [rev(1, '5')], { name: 'eve', type: 'user', roles: ['_admin'], password: 'x' })] }],
    ] as const) {
      const res = await server.request(path, { method, body, auth: ['ann', 'ann-pass'] });
      assert.ok(res.status === 401 || res.status === 403 || res.status === 404, `${method} ${path}: ${res.status} ${res.text}`);
      assert.ok(!res.text.includes('derived_key'), `${method} ${path} leaked a password hash`);
    }
    const own = await server.request(`/_users/${USER_PREFIX}ann?open_revs=all`, { auth: ['ann', 'ann-pass'] });
    assert.equal(own.status, 200, 'a user may open the revisions of their own document');
    assert.equal(own.body[0].ok.name, 'ann');
    assert.equal((await server.admin(`/_users/${USER_PREFIX}eve`)).status, 404);
  });

  test('when _users is opened to members, _bulk_get still hides other users\u2019 hashes', async () => {
    await server.admin('/_node/_local/_config/couchdb/users_db_security_editable', { method: 'PUT', body: '"true"' });
    await server.admin('/_users/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['ann'], roles: [] } } });
    try {
      const res = await server.request('/_users/_bulk_get', { method: 'POST', auth: ['ann', 'ann-pass'], body: { docs: [{ id: `${USER_PREFIX}bob` }, { id: `${USER_PREFIX}ann` }] } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results[0].docs[0].error.error, 'not_found');
      assert.ok(res.body.results[1].docs[0].ok.derived_key, 'the owner sees their own document');
      assert.ok(!JSON.stringify(res.body.results[0]).includes('derived_key'));
    } finally {
      await server.admin('/_users/_security', { method: 'PUT', body: { admins: { roles: ['_admin'] }, members: { roles: ['_admin'] } } });
    }
  });

  test('replication into _users by an admin goes through the users rules: passwords are hashed, bad docs refused', async () => {
    const carol = replicated(`${USER_PREFIX}carol`, [rev(1, '1')], userBody('carol', 'carol-pass') as Record<string, unknown>);
    const bad = replicated(`${USER_PREFIX}dave`, [rev(1, '2')], { name: 'someone-else', type: 'user', roles: [] });
    const res = await server.admin('/_users/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [carol, bad] } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.length, 1);
    assert.equal(res.body[0].id, `${USER_PREFIX}dave`);
    assert.equal(res.body[0].error, 'forbidden');
    const stored = await server.admin(`/_users/${USER_PREFIX}carol`);
    assert.equal(stored.body.password, undefined);
    assert.equal(stored.body.password_scheme, 'pbkdf2');
    assert.equal((await server.request('/_session', { auth: ['carol', 'carol-pass'] })).body.userCtx.name, 'carol');
  });
});

describe('request size limits of bulk endpoints', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/big', { method: 'PUT' });
  });
  after(async () => server.close());

  /** Streams `megabytes` of one JSON _bulk_docs body, with or without Content-Length; resolves with the answer. */
  function sendHuge(path: string, megabytes: number, declareLength: boolean): Promise<{ status: number; body: string }> {
    const url = new URL(server.url);
    const doc = JSON.stringify({ _id: 'x', _rev: rev(1, 'a'), pad: 'p'.repeat(1024 * 1024 - 100) });
    const head = '{"new_edits":false,"docs":[';
    const total = head.length + megabytes * doc.length + (megabytes - 1) + 2;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(ADMIN.join(':')).toString('base64')}` };
      if (declareLength) headers['Content-Length'] = String(total);
      const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', (error) => reject(error));
      let sent = 0;
      const pump = (): void => {
        if (sent === 0) req.write(head);
        while (sent < megabytes) {
          sent++;
          const more = req.write(`${doc}${sent < megabytes ? ',' : ''}`);
          if (!more) {
            req.once('drain', pump);
            return;
          }
        }
        req.end(']}');
      };
      pump();
    });
  }

  test('a 100 MB _bulk_docs batch gets 413 too_large while it is read, and the server goes on', async () => {
    const before = process.memoryUsage().rss;
    const streamed = await sendHuge('/big/_bulk_docs', 100, false);
    assert.equal(streamed.status, 413, streamed.body);
    assert.deepEqual(JSON.parse(streamed.body), { error: 'too_large', reason: 'the request entity is too large' });
    const declared = await sendHuge('/big/_bulk_docs', 100, true);
    assert.equal(declared.status, 413);
    assert.ok(process.memoryUsage().rss - before < 400 * 1024 * 1024, 'the batch was not buffered whole (nor parsed)');
    const small = await server.admin('/big/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'fine' }] } });
    assert.equal(small.status, 201);
    assert.equal((await server.admin('/big')).body.doc_count, 1);
  });

  test('the same limit guards _bulk_get, _revs_diff and POST _changes', async () => {
    for (const path of ['/big/_bulk_get', '/big/_revs_diff', '/big/_changes?filter=_doc_ids']) {
      const res = await sendHuge(path, 70, true);
      assert.equal(res.status, 413, path);
    }
  });
});
