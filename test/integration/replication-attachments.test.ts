/**
 * Issue 20: attachments replicated as CouchDB's replicator copies them, between two real Divan
 * binaries: read with `open_revs` as `multipart/mixed`, written with `PUT ?new_edits=false` as
 * `multipart/related` while being read, only what the target lacks (`atts_since`); a target's
 * validation function refusing some; and a source that answers `open_revs` only in JSON. Small
 * recording proxies in front of the servers show how the replicator spoke.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { RecordingProxy, type Seen } from '../support/recording-proxy.js';
import { Node, eventually } from '../support/replication-pair.js';

describe('attachments replicated as multipart between two Divan binaries', () => {
  let a: Node;
  let b: Node;
  const proxies: RecordingProxy[] = [];
  before(async () => {
    [a, b] = await Promise.all([Node.start('divan-repl-att-a-'), Node.start('divan-repl-att-b-')]);
  });
  after(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  const proxy = async (node: Node, hooks: Parameters<typeof RecordingProxy.start>[1] = {}): Promise<RecordingProxy> => {
    const started = await RecordingProxy.start(node.url, hooks);
    proxies.push(started);
    return started;
  };

  const attach = async (node: Node, db: string, id: string, name: string, type: string, bytes: Buffer): Promise<string> => {
    const current = await node.call(`/${db}/${id}`);
    const rev = current.status === 200 ? `?rev=${current.body._rev}` : '';
    const put = await node.call(`/${db}/${id}/${encodeURIComponent(name)}${rev}`, { method: 'PUT', headers: { 'Content-Type': type }, body: bytes });
    assert.equal(put.status, 201, put.text);
    return put.body.rev as string;
  };

  const sameAttachment = async (db: [string, string], id: string, name: string, bytes: Buffer): Promise<void> => {
    const path = (at: string): string => `/${at}/${id}/${encodeURIComponent(name)}`;
    const [source, target] = await Promise.all([a.call(path(db[0])), b.call(path(db[1]))]);
    assert.equal(target.status, 200, `${id}/${name}: ${target.text.slice(0, 200)}`);
    const raw = async (node: Node, at: string): Promise<Buffer> => {
      const { request } = await import('node:http');
      return new Promise((resolve, reject) => {
        const url = new URL(path(at), node.url);
        request(url, { headers: { Authorization: `Basic ${Buffer.from(node.auth.join(':')).toString('base64')}` } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject).end();
      });
    };
    assert.ok((await raw(b, db[1])).equals(bytes), `${id}/${name}: the target has the same bytes`);
    assert.equal(target.headers['content-md5'], source.headers['content-md5']);
  };

  const multipartPuts = (seen: Seen[]): Seen[] => seen.filter((item) => item.method === 'PUT' && item.url.includes('new_edits=false') && item.contentType.startsWith('multipart/related'));

  test('revisions with attachments are read as multipart/mixed and written as multipart/related PUTs, byte for byte; the others through _bulk_docs', async () => {
    await a.call('/src', { method: 'PUT' });
    await a.call('/src/_bulk_docs', { method: 'POST', body: { docs: Array.from({ length: 5 }, (_, i) => ({ _id: `plain${i}`, n: i })) } });
    const blob = randomBytes(100 * 1024);
    const text = Buffer.from('line of text\n'.repeat(2000));
    const odd = randomBytes(3000);
    await attach(a, 'src', 'one', 'blob.bin', 'application/octet-stream', blob);
    await attach(a, 'src', 'two', 'a.txt', 'text/plain', text);
    await attach(a, 'src', 'two', 'dir/ü "q".bin', 'application/octet-stream', odd);
    const [source, target] = [await proxy(a), await proxy(b)];
    const run = await a.call('/_replicate', { method: 'POST', body: { source: source.dbUrl('src', a.auth), target: target.dbUrl('dst', b.auth), create_target: true } });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.history[0].docs_written, 7, run.text);
    assert.equal(run.body.history[0].doc_write_failures, 0);

    const puts = multipartPuts(target.seen);
    assert.deepEqual(puts.map((item) => item.url.split('?')[0]).sort(), ['/dst/one', '/dst/two']);
    const bulk = target.seen.filter((item) => item.url.startsWith('/dst/_bulk_docs'));
    assert.ok(bulk.length > 0 && bulk.every((item) => item.sentBytes < 10000), `no attachment data in _bulk_docs: ${JSON.stringify(bulk)}`);
    assert.ok(puts.find((item) => item.url.startsWith('/dst/one'))!.sentBytes < blob.length + 2000, 'binary bytes, not base64');
    const reads = source.seen.filter((item) => item.url.includes('open_revs='));
    assert.ok(reads.length >= 2 && reads.every((item) => item.accept === 'multipart/mixed' && item.answerType.startsWith('multipart/mixed')), JSON.stringify(reads));
    await sameAttachment(['src', 'dst'], 'one', 'blob.bin', blob);
    await sameAttachment(['src', 'dst'], 'two', 'a.txt', text);
    await sameAttachment(['src', 'dst'], 'two', 'dir/ü "q".bin', odd);
    const [from, to] = await Promise.all([a.call('/src/two?revs=true'), b.call('/dst/two?revs=true')]);
    assert.deepEqual(to.body, from.body, 'same revision, history and stubs');

    // A new attachment on a document the target has: only it is sent (atts_since), the old one stays.
    const extra = randomBytes(500);
    await attach(a, 'src', 'one', 'small.bin', 'application/octet-stream', extra);
    const again = await a.call('/_replicate', { method: 'POST', body: { source: source.dbUrl('src', a.auth), target: target.dbUrl('dst', b.auth) } });
    assert.equal(again.body.history[0].docs_written - run.body.history[0].docs_written, 1, 'one more (the counts add up over sessions, as CouchDB)');
    const second = multipartPuts(target.seen).slice(puts.length);
    assert.equal(second.length, 1);
    assert.ok(second[0]!.sentBytes < 5000, `only the new attachment travels: ${second[0]!.sentBytes} bytes`);
    await sameAttachment(['src', 'dst'], 'one', 'small.bin', extra);
    await sameAttachment(['src', 'dst'], 'one', 'blob.bin', blob);
  });

  test('a 5 MB attachment is streamed from the source answer into the target request (pull, the job on the target server)', async () => {
    const big = randomBytes(5 * 1024 * 1024);
    await attach(a, 'src', 'big', 'big.bin', 'application/octet-stream', big);
    const target = await proxy(b);
    let streamed = false;
    // The source's answer stops after 1 MiB until the target has received 512 KiB of the PUT: a
    // replicator that held the attachment whole before writing it would never get the rest.
    const source = await proxy(a, {
      beforeAnswerChunk: async (seen) => {
        if (!seen.url.startsWith('/src/big?') || seen.answerBytes < 1024 * 1024 || streamed) return;
        await eventually(async () => (multipartPuts(target.seen).some((put) => put.url.startsWith('/pulled/big') && put.sentBytes > 512 * 1024) ? true : undefined), 15000, 'the PUT to start');
        streamed = true;
      },
    });
    const run = await b.call('/_replicate', { method: 'POST', body: { source: source.dbUrl('src', a.auth), target: target.dbUrl('pulled', b.auth), create_target: true, doc_ids: ['big'] } });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.history[0].docs_written, 1, run.text);
    assert.ok(streamed, 'the target received bytes before the source had sent them all');
    await sameAttachment(['src', 'pulled'], 'big', 'big.bin', big);
  });

  test('a validation function of the target refusing documents with attachments: counted in doc_write_failures, the others arrive', async () => {
    await a.call('/vsrc', { method: 'PUT' });
    const bodies = [0, 1, 2, 3].map(() => randomBytes(20000));
    for (const [n, bytes] of bodies.entries()) {
      await a.call(`/vsrc/att-${n}`, { method: 'PUT', body: { n } });
      await attach(a, 'vsrc', `att-${n}`, 'data.bin', 'application/octet-stream', bytes);
    }
    await b.call('/vdst', { method: 'PUT' });
    await b.call('/vdst/_design/guard', { method: 'PUT', body: { validate_doc_update: 'function (doc) { if (doc.n > 1) throw({forbidden: "too big"}); }' } });
    const target = await proxy(b);
    const run = await a.call('/_replicate', { method: 'POST', body: { source: a.dbUrl('vsrc'), target: target.dbUrl('vdst', b.auth) } });
    assert.equal(run.status, 200, run.text);
    const [entry] = run.body.history;
    assert.equal(entry.doc_write_failures, 2, JSON.stringify(entry));
    assert.equal(entry.docs_written, 2);
    assert.equal(multipartPuts(target.seen).length, 4, 'each was sent as multipart');
    assert.equal((await b.call('/vdst/att-2')).status, 404);
    assert.equal((await b.call('/vdst/att-3')).status, 404);
    await sameAttachment(['vsrc', 'vdst'], 'att-0', 'data.bin', bodies[0]!);
    await sameAttachment(['vsrc', 'vdst'], 'att-1', 'data.bin', bodies[1]!);
  });

  test('a source that answers open_revs only in JSON and has no _bulk_get (an older server): attachments inline through _bulk_docs', async () => {
    const source = await proxy(a, {
      headers: (_method, url, headers) => (url.includes('open_revs=') ? { ...headers, accept: 'application/json' } : headers),
      refuse: (method, url) => (method === 'POST' && url.startsWith('/src/_bulk_get') ? { status: 404, body: { error: 'not_found', reason: 'missing' } } : undefined),
    });
    const target = await proxy(b);
    const run = await a.call('/_replicate', { method: 'POST', body: { source: source.dbUrl('src', a.auth), target: target.dbUrl('old', b.auth), create_target: true, doc_ids: ['one', 'two', 'plain1'] } });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.history[0].docs_written, 3, run.text);
    assert.equal(multipartPuts(target.seen).length, 0, 'nothing to stream');
    assert.ok(source.seen.some((item) => item.url.includes('open_revs=') && item.answerType.startsWith('application/json')));
    const blob = await a.call('/src/one/blob.bin');
    assert.equal((await b.call('/old/one/blob.bin')).headers['content-md5'], blob.headers['content-md5']);
    assert.equal((await b.call('/old/two/a.txt')).text, (await a.call('/src/two/a.txt')).text);
  });
});
