/**
 * Update sequences go out as CouchDB 3's `N-<opaque>` everywhere and come back in `since` (and
 * Last-Event-ID): Divan's own, bare numbers of older clients, and CouchDB's (rewound to 0).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { seqNumber } from '../support/sequences.js';
import { feedLines, openFeed } from './replication-support.js';

/** A sequence a CouchDB 3.5 gave out: base64url of an Erlang term naming its own shards. */
const COUCHDB_SEQ = '3-g1AAAACTeJzLYWBgYMpgTmHgzcvPy09JdcjLz8gvLskBCScyJNX___8_K4M5kR0ojCjFzWRiYDFEVEAK3A';

const ids = (body: { results: { id: string }[] }): string[] => body.results.map((row) => row.id);

describe('update sequences', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.admin('/seqs', { method: 'PUT' });
    for (const id of ['a', 'b', 'c']) await server.admin(`/seqs/${id}`, { method: 'PUT', body: {} });
  });
  after(async () => server.close());

  test('GET /{db} update_seq and purge_seq, _all_docs?update_seq and _changes seq/last_seq are shaped N-<opaque>, N counting updates', async () => {
    const info = await server.admin('/seqs');
    assert.equal(seqNumber(info.body.update_seq), 3);
    assert.equal(seqNumber(info.body.purge_seq), 0);
    assert.equal(seqNumber((await server.admin('/seqs/_all_docs?update_seq=true')).body.update_seq), 3);
    const changes = await server.admin('/seqs/_changes');
    assert.deepEqual(changes.body.results.map((row: { seq: string }) => seqNumber(row.seq)), [1, 2, 3]);
    assert.equal(changes.body.last_seq, info.body.update_seq, 'the last change and the database name the same sequence');
    assert.equal((await server.admin('/seqs')).body.update_seq, info.body.update_seq, 'the same sequence on every read');
  });

  test('continuous, longpoll and eventsource feeds send N-<opaque> sequences too', async () => {
    const continuous = feedLines((await openFeed(server.url, '/seqs/_changes?feed=continuous&limit=1', { auth: ADMIN }).done).text);
    assert.equal(seqNumber(continuous[0]!['seq']), 1);
    assert.equal(seqNumber(continuous[1]!['last_seq']), 1);
    const longpoll = JSON.parse((await openFeed(server.url, '/seqs/_changes?feed=longpoll&since=2', { auth: ADMIN }).done).text);
    assert.equal(seqNumber(longpoll.last_seq), 3);
    const events = openFeed(server.url, '/seqs/_changes?feed=eventsource&heartbeat=50', { auth: ADMIN });
    const text = await events.waitFor((t) => t.includes('event: heartbeat'));
    events.abort();
    const eventIds = [...text.matchAll(/^id: (.*)$/gm)].map((match) => JSON.parse(match[1]!) as string);
    assert.deepEqual(eventIds.map(seqNumber), [1, 2, 3]);
  });

  test('since= a sequence Divan gave out resumes right after it, in the normal, continuous and longpoll feeds', async () => {
    const first = (await server.admin('/seqs/_changes?limit=1')).body.last_seq as string;
    assert.deepEqual(ids((await server.admin(`/seqs/_changes?since=${encodeURIComponent(first)}`)).body), ['b', 'c']);
    assert.deepEqual(ids((await server.admin(`/seqs/_changes?since=${encodeURIComponent(JSON.stringify(first))}`)).body), ['b', 'c'], 'quoted too');
    const continuous = await openFeed(server.url, `/seqs/_changes?feed=continuous&limit=1&since=${encodeURIComponent(first)}`, { auth: ADMIN }).done;
    assert.equal(feedLines(continuous.text)[0]!['id'], 'b');
    const longpoll = await openFeed(server.url, `/seqs/_changes?feed=longpoll&since=${encodeURIComponent(first)}`, { auth: ADMIN }).done;
    assert.deepEqual(ids(JSON.parse(longpoll.text)), ['b', 'c']);
  });

  test('Last-Event-ID with a sequence Divan gave out resumes an eventsource feed after it', async () => {
    const second = (await server.admin('/seqs/_changes?limit=2')).body.last_seq as string;
    const feed = openFeed(server.url, '/seqs/_changes?feed=eventsource&timeout=100', { auth: ADMIN, headers: { 'Last-Event-ID': JSON.stringify(second) } });
    const events = [...(await feed.done).text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!).id as string);
    assert.deepEqual(events, ['c']);
  });

  test('since= a bare number (older clients, checkpoints written before sequences were opaque) still resumes there; since=now starts at the end', async () => {
    assert.deepEqual(ids((await server.admin('/seqs/_changes?since=1')).body), ['b', 'c']);
    assert.deepEqual(ids((await server.admin('/seqs/_changes?since=%222%22')).body), ['c']);
    const now = await server.admin('/seqs/_changes?since=now');
    assert.deepEqual(now.body.results, []);
    assert.equal(seqNumber(now.body.last_seq), 3);
  });

  test('since= a sequence a CouchDB gave out (an opaque part naming its shards) rewinds to 0, as CouchDB does for shards it cannot find', async () => {
    const res = await server.admin(`/seqs/_changes?since=${encodeURIComponent(COUCHDB_SEQ)}`);
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ['a', 'b', 'c']);
  });

  test('since= text that is no sequence is 400 bad_request with CouchDB reason', async () => {
    for (const since of ['abc', '3-', '3-not+base64', '3-abc', '-1', '1.5']) {
      const res = await server.admin(`/seqs/_changes?since=${encodeURIComponent(since)}`);
      assert.equal(res.status, 400, since);
      assert.deepEqual(res.body, { error: 'bad_request', reason: "Malformed sequence supplied in 'since' parameter." }, since);
    }
  });

  test('a sequence of a deleted database rewinds to 0 on the database recreated with its name, not skipping its first changes', async () => {
    await server.admin('/phoenix', { method: 'PUT' });
    for (const id of ['old1', 'old2', 'old3']) await server.admin(`/phoenix/${id}`, { method: 'PUT', body: {} });
    const old = (await server.admin('/phoenix')).body.update_seq as string;
    await server.admin('/phoenix', { method: 'DELETE' });
    await server.admin('/phoenix', { method: 'PUT' });
    for (const id of ['new1', 'new2', 'new3', 'new4']) await server.admin(`/phoenix/${id}`, { method: 'PUT', body: {} });
    const res = await server.admin(`/phoenix/_changes?since=${encodeURIComponent(old)}`);
    assert.deepEqual(ids(res.body), ['new1', 'new2', 'new3', 'new4']);
    const third = (await server.admin('/phoenix/_changes?limit=3')).body.last_seq as string;
    assert.equal(seqNumber(third), seqNumber(old));
    assert.notEqual(third, old, 'the opaque part names the database instance');
  });
});
