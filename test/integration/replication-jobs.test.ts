/**
 * Issue 20, `_replicator` documents between two real Divan binaries: a continuous job follows new
 * writes, survives a restart of its target and of its own server (resuming from its checkpoint),
 * stops when its document is deleted; a one-shot document ends `completed`, one with wrong
 * credentials `failed` with the reason, having written nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, Node } from '../support/replication-pair.js';

describe('_replicator documents between two Divan binaries', () => {
  let a: Node;
  let b: Node;
  before(async () => {
    [a, b] = await Promise.all([Node.start('divan-jobs-a-'), Node.start('divan-jobs-b-')]);
    await a.call('/src', { method: 'PUT' });
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  const arrived = (id: string) => eventually(async () => ((await b.call(`/dst/${id}`)).status === 200 ? true : undefined), 20000, `${id} on the target`);

  test('a continuous job copies new writes, across a restart of the target and of its own server', async () => {
    const put = await a.call('/_replicator/live', {
      method: 'PUT',
      body: { source: a.dbUrl('src'), target: { url: `${b.url}/dst`, auth: { basic: { username: b.auth[0], password: b.auth[1] } } }, create_target: true, continuous: true, checkpoint_interval: 200 },
    });
    assert.equal(put.status, 201);
    assert.equal((await a.call('/_replicator/live')).body.owner, 'boss', 'the author is the owner');
    await a.call('/src/one', { method: 'PUT', body: { n: 1 } });
    await arrived('one');
    const docs = await a.call('/_scheduler/docs/_replicator/live');
    assert.equal(docs.body.state, 'running');
    assert.match(docs.body.id, /\+continuous\+create_target$/);
    const baseId = String(docs.body.id).split('+')[0];

    await b.restart();
    await a.call('/src/two', { method: 'PUT', body: { n: 2 } });
    await arrived('two');

    const checkpointed = await eventually(async () => {
      const local = await b.call(`/dst/_local/${baseId}`);
      return local.status === 200 && local.body.history[0].docs_written >= 2 ? local.body : undefined;
    }, 20000, 'a checkpoint');
    await a.restart();
    await a.call('/src/three', { method: 'PUT', body: { n: 3 } });
    await arrived('three');
    const resumed = await eventually(async () => {
      const local = await b.call(`/dst/_local/${baseId}`);
      return local.body.session_id !== checkpointed.session_id ? local.body : undefined;
    }, 20000, 'a checkpoint of the new session');
    assert.notEqual(resumed.history[0].start_last_seq, 0, 'the new session started from the checkpoint');
    assert.equal(resumed.history[1].session_id, checkpointed.session_id);

    const current = await a.call('/_replicator/live');
    await a.call(`/_replicator/live?rev=${current.body._rev}`, { method: 'DELETE' });
    await eventually(async () => ((await a.call('/_scheduler/jobs')).body.total_rows === 0 ? true : undefined), 10000, 'the job to stop');
  });

  test('a one-shot document ends completed with its stats written back', async () => {
    await a.call('/_replicator/once', { method: 'PUT', body: { source: a.dbUrl('src'), target: b.dbUrl('copy'), create_target: true } });
    const doc = await eventually(async () => {
      const read = await a.call('/_replicator/once');
      return read.body._replication_state === 'completed' ? read.body : undefined;
    }, 20000, 'completion');
    assert.equal(doc._replication_stats.docs_written, 3);
    assert.match(doc._replication_state_time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal((await b.call('/copy')).body.doc_count, 3);
    const shown = await a.call('/_scheduler/docs/_replicator/once');
    assert.equal(shown.body.state, 'completed');
  });

  test('wrong credentials fail the document with the reason, and nothing is written', async () => {
    await a.call('/_replicator/denied', { method: 'PUT', body: { source: a.dbUrl('src'), target: b.dbUrl('denied', ['boss', 'wrong']), create_target: true } });
    const doc = await eventually(async () => {
      const read = await a.call('/_replicator/denied');
      return read.body._replication_state === 'failed' ? read.body : undefined;
    }, 20000, 'failure');
    assert.equal(doc._replication_state_reason, `unauthorized: unauthorized to access or create database ${b.url}/denied/`);
    assert.equal((await b.call('/denied')).status, 404);
    const shown = await a.call('/_scheduler/docs/_replicator/denied');
    assert.equal(shown.body.state, 'failed');
    assert.ok(!JSON.stringify(shown.body).includes('wrong'));
  });

  test('a user writes only replication documents of their own, and sees others without credentials', async () => {
    await a.call('/_users/org.couchdb.user:ann', { method: 'PUT', body: { name: 'ann', password: 'ann-pass', roles: [], type: 'user' } });
    await a.call('/_replicator/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['ann'], roles: [] } } });
    const ann: [string, string] = ['ann', 'ann-pass'];
    const theirs = await a.call('/_replicator/anns', { method: 'PUT', auth: ann, body: { source: a.dbUrl('src'), target: b.dbUrl('anns'), create_target: true, owner: 'boss' } });
    assert.equal(theirs.status, 403);
    assert.equal(theirs.body.reason, "Can't update replication documents from other users.");
    const malformed = await a.call('/_replicator/bad', { method: 'PUT', auth: ann, body: { source: 'src', target: b.dbUrl('x') } });
    assert.deepEqual(malformed.body, { error: 'forbidden', reason: 'local_endpoints_not_supported' });
    const others = await a.call('/_replicator/once', { auth: ann });
    assert.equal(others.body.source, `${a.url}/src`);
  });
});
