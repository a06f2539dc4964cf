import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

const md5 = (bytes: Buffer): string => `md5-${createHash('md5').update(bytes).digest('base64')}`;

describe('attachments', () => {
  let server: TestServer;
  before(async () => {
    // Stored as sent (identity): gzip storage of text types has its own tests (attachments-gzip).
    server = await startServer({ ini: '[couchdb]\nmax_attachment_size = 300000\n[attachments]\ncompression_level = 0\n' });
    await server.admin('/att', { method: 'PUT' });
  });
  after(async () => server.close());

  test('inline base64 on PUT is stored as a stub with content_type, revpos, digest, length', async () => {
    const bytes = Buffer.from('hello, attachments');
    const put = await server.admin('/att/inline', { method: 'PUT', body: { a: 1, _attachments: { 'hi.txt': { content_type: 'text/plain', data: bytes.toString('base64') } } } });
    assert.equal(put.status, 201);
    const doc = await server.admin('/att/inline');
    assert.deepEqual(doc.body._attachments, { 'hi.txt': { content_type: 'text/plain', revpos: 1, digest: md5(bytes), length: bytes.length, stub: true } });
    const withData = await server.admin('/att/inline?attachments=true');
    assert.deepEqual(withData.body._attachments['hi.txt'], { content_type: 'text/plain', revpos: 1, digest: md5(bytes), data: bytes.toString('base64') });
    const raw = await server.admin('/att/inline/hi.txt');
    assert.equal(raw.status, 200);
    assert.equal(raw.headers['content-type'], 'text/plain');
    assert.equal(raw.text, 'hello, attachments');
    assert.equal(raw.headers['etag'], `"${md5(bytes).slice(4)}"`);
    assert.equal((await server.admin('/att/inline/hi.txt', { headers: { 'If-None-Match': raw.headers['etag'] as string } })).status, 304);
  });

  test('stubs are kept across updates when sent, dropped when left out; a stub naming nothing is 412', async () => {
    const first = await server.admin('/att/keep', { method: 'PUT', body: { _attachments: { a: { content_type: 'text/plain', data: Buffer.from('A').toString('base64') }, b: { content_type: 'text/plain', data: 'Qg==' } } } });
    const second = await server.admin('/att/keep', { method: 'PUT', body: { _rev: first.body.rev, v: 2, _attachments: { a: { stub: true }, c: { content_type: 'image/png', data: 'Qw==' } } } });
    assert.equal(second.status, 201);
    const doc = (await server.admin('/att/keep')).body;
    assert.deepEqual(Object.keys(doc._attachments).sort(), ['a', 'c']);
    assert.equal(doc._attachments.a.revpos, 1);
    assert.equal(doc._attachments.c.revpos, 2);
    assert.equal((await server.admin('/att/keep/a')).text, 'A');
    assert.equal((await server.admin('/att/keep/b')).status, 404);
    assert.equal((await server.admin(`/att/keep/b?rev=${first.body.rev}`)).text, 'B', 'the older revision still has it');
    const missing = await server.admin('/att/keep', { method: 'PUT', body: { _rev: second.body.rev, _attachments: { zz: { stub: true } } } });
    assert.equal(missing.status, 412);
    assert.deepEqual(missing.body, { error: 'missing_stub', reason: 'Invalid attachment stub in keep for zz' });
    const dropped = await server.admin('/att/keep', { method: 'PUT', body: { _rev: second.body.rev } });
    assert.equal(dropped.status, 201);
    assert.equal((await server.admin('/att/keep')).body._attachments, undefined);
  });

  test('standalone PUT, GET, HEAD, DELETE with rev and If-Match; names with / and unicode', async () => {
    const bytes = randomBytes(70_000);
    const put = await server.admin(`/att/alone/dir/${encodeURIComponent('ünï x.bin')}`, { method: 'PUT', body: bytes, headers: { 'Content-Type': 'application/x-thing' } });
    assert.equal(put.status, 201);
    assert.equal(put.body.id, 'alone');
    const get = await rawGet(server, `/att/alone/dir/${encodeURIComponent('ünï x.bin')}`);
    assert.equal(get.status, 200);
    assert.ok(get.body.equals(bytes));
    assert.equal(get.headers['content-length'], String(bytes.length));
    const head = await server.admin(`/att/alone/dir/${encodeURIComponent('ünï x.bin')}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const doc = (await server.admin('/att/alone')).body;
    assert.equal(doc._attachments['dir/ünï x.bin'].content_type, 'application/x-thing');
    const noRev = await server.admin('/att/alone/other', { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(noRev.status, 409);
    const second = await server.admin('/att/alone/other', { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/plain', 'If-Match': `"${put.body.rev}"` } });
    assert.equal(second.status, 201);
    const del = await server.admin(`/att/alone/dir/${encodeURIComponent('ünï x.bin')}?rev=${second.body.rev}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.deepEqual(Object.keys((await server.admin('/att/alone')).body._attachments), ['other']);
    assert.equal((await server.admin(`/att/alone/nothing?rev=${del.body.rev}`, { method: 'DELETE' })).status, 404);
  });

  test('Range requests answer 206 with Content-Range; an unsatisfiable one 416', async () => {
    const bytes = randomBytes(600_000).subarray(0, 290_000);
    const put = await server.admin('/att/ranged/r', { method: 'PUT', body: bytes, headers: { 'Content-Type': 'application/octet-stream' } });
    assert.equal(put.status, 201);
    const part = await rawGet(server, '/att/ranged/r', { Range: 'bytes=262140-262150' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 262140-262150/${bytes.length}`);
    assert.ok(part.body.equals(bytes.subarray(262140, 262151)));
    const tail = await rawGet(server, '/att/ranged/r', { Range: 'bytes=-5' });
    assert.ok(tail.body.equals(bytes.subarray(bytes.length - 5)));
    assert.equal((await rawGet(server, '/att/ranged/r', { Range: `bytes=${bytes.length + 10}-` })).status, 416);
  });

  test('max_attachment_size answers 413 attachment_too_large, inline and standalone', async () => {
    const big = Buffer.alloc(300_001, 7);
    const inline = await server.admin('/att/big', { method: 'PUT', body: { _attachments: { b: { content_type: 'x/y', data: big.toString('base64') } } } });
    assert.equal(inline.status, 413);
    assert.deepEqual(inline.body, { error: 'attachment_too_large', reason: 'b' });
    const alone = await server.admin('/att/big2/b', { method: 'PUT', body: big, headers: { 'Content-Type': 'x/y' } });
    assert.equal(alone.status, 413);
    assert.equal((await server.admin('/att/big2')).status, 404);
  });

  test('_bulk_docs with inline data, and new_edits=false with stubs of an ancestor', async () => {
    const rows = await server.admin('/att/_bulk_docs', { method: 'POST', body: { docs: [{ _id: 'b1', _attachments: { f: { content_type: 'text/plain', data: 'Zm9v' } } }, { _id: 'b2' }] } });
    assert.equal(rows.status, 201);
    assert.ok(rows.body.every((row: { ok?: boolean }) => row.ok));
    const rev1 = rows.body[0].rev as string;
    const replicated = await server.admin('/att/_bulk_docs', {
      method: 'POST',
      body: { new_edits: false, docs: [{ _id: 'b1', _rev: '2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', _revisions: { start: 2, ids: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', rev1.slice(2)] }, _attachments: { f: { stub: true, revpos: 1 }, g: { content_type: 'text/plain', data: 'YmFy' } } }] },
    });
    assert.equal(replicated.status, 201);
    const doc = (await server.admin('/att/b1?attachments=true')).body;
    assert.equal(doc._rev, '2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    assert.equal(Buffer.from(doc._attachments.f.data, 'base64').toString(), 'foo');
    assert.equal(Buffer.from(doc._attachments.g.data, 'base64').toString(), 'bar');
    assert.equal(doc._attachments.g.revpos, 2);
    const since = (await server.admin(`/att/b1?atts_since=${encodeURIComponent(JSON.stringify([rev1]))}`)).body;
    assert.equal(since._attachments.f.stub, true, 'the client has revision 1 and so f');
    assert.equal(typeof since._attachments.g.data, 'string');
  });

  test('open_revs and _bulk_get carry attachments with attachments=true, stubs otherwise', async () => {
    const put = await server.admin('/att/revs', { method: 'PUT', body: { _attachments: { t: { content_type: 'text/plain', data: Buffer.from('open revs').toString('base64') } } } });
    const open = await server.admin(`/att/revs?open_revs=all&attachments=true`, { headers: { Accept: 'application/json' } });
    assert.equal(open.body[0].ok._attachments.t.data, Buffer.from('open revs').toString('base64'));
    const mixed = await server.admin(`/att/revs?open_revs=${encodeURIComponent(JSON.stringify([put.body.rev]))}&attachments=true`, { headers: { Accept: 'multipart/mixed' } });
    assert.match(String(mixed.headers['content-type']), /^multipart\/mixed/);
    // As CouchDB's send_docs_multipart: the revision is a multipart/related part, its attachment a
    // part of its own in bytes, whether or not `attachments=true` was asked (CouchDB's replicator does not ask).
    for (const asked of ['&attachments=true', '']) {
      const answer = await server.admin(`/att/revs?open_revs=${encodeURIComponent(JSON.stringify([put.body.rev]))}${asked}`, { headers: { Accept: 'multipart/mixed' } });
      assert.match(answer.text, /\r\nContent-Type: multipart\/related; boundary="[0-9a-f]+"\r\n\r\n--[0-9a-f]+\r\nContent-Type: application\/json\r\n\r\n\{[^\r]*"follows":true/, asked);
      assert.ok(answer.text.includes('\r\n\r\nopen revs\r\n--') && !answer.text.includes(Buffer.from('open revs').toString('base64')), asked);
    }
    const since = await server.admin(`/att/revs?open_revs=${encodeURIComponent(JSON.stringify([put.body.rev]))}&atts_since=${encodeURIComponent(JSON.stringify([put.body.rev]))}`, { headers: { Accept: 'multipart/mixed' } });
    assert.ok(since.text.includes('"stub":true') && !since.text.includes('multipart/related'), 'atts_since: a JSON part with stubs');
    const bulk = await server.admin('/att/_bulk_get?attachments=true&revs=true', { method: 'POST', body: { docs: [{ id: 'revs' }] } });
    assert.equal(bulk.body.results[0].docs[0].ok._attachments.t.data, Buffer.from('open revs').toString('base64'));
    const stubs = await server.admin('/att/_bulk_get', { method: 'POST', body: { docs: [{ id: 'revs', rev: put.body.rev }] } });
    assert.equal(stubs.body.results[0].docs[0].ok._attachments.t.stub, true);
  });

  test('multipart/related PUT with follows parts, as CouchDB replicates, new_edits=false with a stub', async () => {
    const first = Buffer.from('first attachment');
    const created = await server.admin('/att/multi', { method: 'PUT', body: { _attachments: { keep: { content_type: 'text/plain', data: first.toString('base64') } } } });
    const bytes = randomBytes(100_000);
    const doc = {
      _id: 'multi',
      _rev: '2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      _revisions: { start: 2, ids: ['bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', created.body.rev.slice(2)] },
      _attachments: { keep: { content_type: 'text/plain', revpos: 1, digest: md5(first), length: first.length, stub: true }, 'new.bin': { content_type: 'application/octet-stream', revpos: 2, digest: md5(bytes), length: bytes.length, follows: true } },
    };
    const body = Buffer.concat([
      Buffer.from(`--xyz\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}\r\n--xyz\r\nContent-Disposition: attachment; filename="new.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      bytes,
      Buffer.from('\r\n--xyz--'),
    ]);
    const put = await server.admin('/att/multi?new_edits=false', { method: 'PUT', body, headers: { 'Content-Type': 'multipart/related; boundary="xyz"' } });
    assert.equal(put.status, 201, put.text);
    const stored = (await server.admin('/att/multi')).body;
    assert.equal(stored._rev, doc._rev);
    assert.equal(stored._attachments['new.bin'].digest, md5(bytes));
    assert.equal(stored._attachments.keep.revpos, 1);
    assert.ok((await rawGet(server, '/att/multi/new.bin')).body.equals(bytes));
    const plain = await server.admin('/att/multi2', { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(plain.status, 415, 'other bodies than JSON and multipart/related are still refused');
  });

  test('a follows part whose bytes do not match its stub digest is refused (400) and nothing is written: parts never land under the wrong name', async () => {
    const one = Buffer.from('bytes of the attachment named 1');
    const other = Buffer.from('bytes of b.txt');
    // Sent in the JSON text's order (b.txt, then 1) with the parts in that order; pairing them in
    // JavaScript's key order (integer-like keys first) would swap the two.
    const json = `{"_id":"swap","_rev":"1-cccccccccccccccccccccccccccccccc","_revisions":{"start":1,"ids":["cccccccccccccccccccccccccccccccc"]},"_attachments":{"b.txt":{"content_type":"text/plain","revpos":1,"digest":"${md5(other)}","length":${other.length},"follows":true},"1":{"content_type":"text/plain","revpos":1,"digest":"${md5(one)}","length":${one.length},"follows":true}}}`;
    const part = (bytes: Buffer): Buffer[] => [Buffer.from('\r\n--xyz\r\nContent-Type: text/plain\r\n\r\n'), bytes];
    const body = Buffer.concat([Buffer.from(`--xyz\r\nContent-Type: application/json\r\n\r\n${json}`), ...part(other), ...part(one), Buffer.from('\r\n--xyz--')]);
    const put = await server.admin('/att/swap?new_edits=false', { method: 'PUT', body, headers: { 'Content-Type': 'multipart/related; boundary="xyz"' } });
    if (put.status === 201) {
      // Paired by the text's order: then each name must hold its own bytes.
      assert.ok((await rawGet(server, '/att/swap/1')).body.equals(one));
      assert.ok((await rawGet(server, '/att/swap/b.txt')).body.equals(other));
    } else {
      assert.equal(put.status, 400, put.text);
      assert.match(put.body.reason, /does not match its digest/);
      assert.equal((await server.admin('/att/swap')).status, 404, 'nothing written');
    }
  });

  test('a replicated follows part CouchDB sends gzip-compressed (encoding in its stub) is stored as sent, with its digest and revpos, and read decoded', async () => {
    const text = Buffer.from('compressible text\n'.repeat(500));
    const gz = gzipSync(text);
    const doc = {
      _id: 'gz-follows',
      _rev: '3-cccccccccccccccccccccccccccccccc',
      _revisions: { start: 3, ids: ['cccccccccccccccccccccccccccccccc', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'] },
      _attachments: { 'a.txt': { content_type: 'text/plain', revpos: 2, digest: md5(gz), length: text.length, follows: true, encoding: 'gzip', encoded_length: gz.length } },
    };
    const body = Buffer.concat([
      Buffer.from(`--gzb\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}\r\n--gzb\r\nContent-Disposition: attachment; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`),
      gz,
      Buffer.from('\r\n--gzb--'),
    ]);
    const put = await server.admin('/att/gz-follows?new_edits=false', { method: 'PUT', body, headers: { 'Content-Type': 'multipart/related; boundary="gzb"' } });
    assert.equal(put.status, 201, put.text);
    assert.ok((await rawGet(server, '/att/gz-follows/a.txt')).body.equals(text), 'the identity bytes');
    const stub = (await server.admin('/att/gz-follows')).body._attachments['a.txt'];
    assert.equal(stub.length, text.length);
    assert.equal(stub.revpos, 2, 'the revpos it was sent with, not the revision generation');
    const info = (await server.admin('/att/gz-follows?att_encoding_info=true')).body._attachments['a.txt'];
    assert.deepEqual(info, { content_type: 'text/plain', revpos: 2, digest: md5(gz), length: text.length, stub: true, encoding: 'gzip', encoded_length: gz.length });
  });

  test('_all_docs and _changes with include_docs&attachments=true carry the data', async () => {
    await server.admin('/att-list', { method: 'PUT' });
    await server.admin('/att-list/one', { method: 'PUT', body: { _attachments: { x: { content_type: 'text/plain', data: 'eHl6' } } } });
    const all = await server.admin('/att-list/_all_docs?include_docs=true&attachments=true');
    assert.equal(all.body.rows[0].doc._attachments.x.data, 'eHl6');
    const keys = await server.admin('/att-list/_all_docs?include_docs=true&attachments=true', { method: 'POST', body: { keys: ['one', 'none'] } });
    assert.equal(keys.body.rows[0].doc._attachments.x.data, 'eHl6');
    assert.equal(keys.body.rows[1].error, 'not_found');
    const changes = await server.admin('/att-list/_changes?include_docs=true&attachments=true');
    assert.equal(changes.body.results[0].doc._attachments.x.data, 'eHl6');
    const stubs = await server.admin('/att-list/_changes?include_docs=true');
    assert.equal(stubs.body.results[0].doc._attachments.x.stub, true);
  });

  test('a users-database document keeps its rules: its owner may add an attachment, others may not read it', async () => {
    await server.admin('/_users/org.couchdb.user:owner', { method: 'PUT', body: { name: 'owner', password: 'pw', roles: [], type: 'user' } });
    await server.admin('/_users/org.couchdb.user:stranger', { method: 'PUT', body: { name: 'stranger', password: 'pw', roles: [], type: 'user' } });
    const own = await server.request('/_users/org.couchdb.user:owner', { auth: ['owner', 'pw'] });
    const put = await server.request(`/_users/org.couchdb.user:owner/avatar.png?rev=${own.body._rev}`, { method: 'PUT', body: 'png', headers: { 'Content-Type': 'image/png' }, auth: ['owner', 'pw'] });
    assert.equal(put.status, 201, put.text);
    assert.equal((await server.request('/_users/org.couchdb.user:owner/avatar.png', { auth: ['owner', 'pw'] })).text, 'png');
    assert.equal((await server.request('/_users/org.couchdb.user:owner/avatar.png', { auth: ['stranger', 'pw'] })).status, 404);
    const stolen = await server.request(`/_users/org.couchdb.user:owner/x.txt?rev=${put.body.rev}`, { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/plain' }, auth: ['stranger', 'pw'] });
    assert.ok(stolen.status === 401 || stolen.status === 403 || stolen.status === 404, `a stranger's write is refused (${stolen.status})`);
  });

  test('_local documents have no attachments: 400 on an attachment path, _attachments dropped', async () => {
    const put = await server.admin('/att/_local/l', { method: 'PUT', body: { a: 1, _attachments: { f: { content_type: 'text/plain', data: 'eA==' } } } });
    assert.equal(put.status, 201);
    assert.deepEqual((await server.admin('/att/_local/l')).body, { _id: '_local/l', _rev: '0-1', a: 1 });
    const att = await server.admin('/att/_local/l/f');
    assert.equal(att.status, 400);
    assert.deepEqual(att.body, { error: 'bad_request', reason: '_local documents do not accept attachments.' });
  });

  test('GET with Accept: multipart/related and attachments=true sends each newer attachment as a part', async () => {
    const bytes = randomBytes(300_000).subarray(0, 290_000);
    const first = await server.admin('/att/related', { method: 'PUT', body: { a: 1, _attachments: { old: { content_type: 'text/plain', data: 'b2xk' } } } });
    const second = await server.admin(`/att/related/new.bin?rev=${first.body.rev}`, { method: 'PUT', body: bytes, headers: { 'Content-Type': 'application/x-new' } });
    assert.equal(second.status, 201);
    const since = encodeURIComponent(JSON.stringify([first.body.rev]));
    const res = await rawGet(server, `/att/related?atts_since=${since}`, { Accept: 'multipart/related' });
    assert.equal(res.status, 200);
    const boundary = /boundary="([^"]+)"/.exec(String(res.headers['content-type']))![1]!;
    const sections = res.body.toString('latin1').split(`--${boundary}`);
    assert.equal(sections.length, 4, 'the document, one attachment part, the closing delimiter');
    const doc = JSON.parse(sections[1]!.split('\r\n\r\n')[1]!);
    assert.equal(doc._attachments.old.stub, true);
    assert.deepEqual(doc._attachments['new.bin'], { content_type: 'application/x-new', revpos: 2, digest: md5(bytes), length: bytes.length, follows: true });
    const [head, ...rest] = sections[2]!.split('\r\n\r\n');
    assert.match(head!, /filename="new.bin"/);
    assert.ok(Buffer.from(rest.join('\r\n\r\n').slice(0, -2), 'latin1').equals(bytes));
    const json = await server.admin('/att/related', { headers: { Accept: 'multipart/related' } });
    assert.equal(json.headers['content-type'], 'application/json', 'without attachments=true the answer stays JSON');
  });

  test('design-document attachments need a database admin', async () => {
    await server.admin('/_users/org.couchdb.user:member', { method: 'PUT', body: { name: 'member', password: 'pw', roles: [], type: 'user' } });
    await server.admin('/att/_security', { method: 'PUT', body: { members: { names: ['member'] }, admins: {} } });
    const refused = await server.request('/att/_design/app/logo.txt', { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/plain' }, auth: ['member', 'pw'] });
    assert.equal(refused.status, 401);
    const byAdmin = await server.admin('/att/_design/app/logo.txt', { method: 'PUT', body: 'logo', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(byAdmin.status, 201);
    assert.equal((await server.request('/att/_design/app/logo.txt', { auth: ['member', 'pw'] })).text, 'logo');
    const outsider = await server.request('/att/inline/hi.txt');
    assert.equal(outsider.status, 401);
  });
});

async function rawGet(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Basic ${Buffer.from('root:r00t-pass').toString('base64')}`, ...headers } });
  return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: Buffer.from(await res.arrayBuffer()) };
}
