/**
 * Issue 20, server-side replication between two real Divan binaries (separate data directories,
 * real HTTP): one-shot `_replicate` with conflicts and CouchDB-format checkpoints, filters, a
 * validation function refusing documents, wrong remote credentials, and no secret in any output.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Node } from '../support/replication-pair.js';

const PASSWORD = 'b0ss-pass';

describe('replication between two Divan binaries (one-shot)', () => {
  let a: Node;
  let b: Node;
  before(async () => {
    [a, b] = await Promise.all([Node.start('divan-repl-a-'), Node.start('divan-repl-b-')]);
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  const replicate = (body: object) => a.call('/_replicate', { method: 'POST', body });

  test('copies documents with their history and conflicts, checkpoints in CouchDB format, then has no changes', async () => {
    await a.call('/src', { method: 'PUT' });
    const docs = Array.from({ length: 30 }, (_, i) => ({ _id: `d${String(i).padStart(2, '0')}`, n: i }));
    await a.call('/src/_bulk_docs', { method: 'POST', body: { docs } });
    const first = (await a.call('/src/d00')).body._rev.slice(2);
    // d00 gets two branches on the source: a conflict the target must receive whole.
    const branch = (hex: string, side: string): object => ({ _id: 'd00', _rev: `2-${hex}`, _revisions: { start: 2, ids: [hex, first] }, side });
    await a.call('/src/_bulk_docs', { method: 'POST', body: { new_edits: false, docs: [branch('aaaa', 'x'), branch('bbbb', 'y')] } });
    await a.call('/src/gone', { method: 'PUT', body: {} }).then((put) => a.call(`/src/gone?rev=${put.body.rev}`, { method: 'DELETE' }));

    const result = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst'), create_target: true });
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.body.ok, true);
    assert.equal(result.body.replication_id_version, 4);
    const [entry] = result.body.history;
    assert.equal(entry.docs_written, 32, '29 documents, two leaves of d00, one deletion');
    assert.equal(entry.doc_write_failures, 0);
    assert.equal(entry.start_last_seq, 0);
    assert.equal(result.body.source_last_seq, entry.recorded_seq);

    const copied = await b.call('/dst/d00?conflicts=true&revs=true');
    const original = await a.call('/src/d00?conflicts=true&revs=true');
    assert.deepEqual(copied.body, original.body, 'winner, conflicts and history are the same on both ends');
    assert.equal(copied.body._conflicts.length, 1);
    assert.equal((await b.call('/dst/gone')).body.reason, 'deleted');
    assert.equal((await b.call('/dst')).body.doc_count, 30);

    // The checkpoint: the same _local document on both ends, keyed by the replication id.
    const tasksBefore = result.body.session_id as string;
    const again = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst'), create_target: true });
    assert.equal(again.body.no_changes, true);
    assert.equal(again.body.session_id, tasksBefore);
  });

  test('the checkpoint documents carry CouchDB fields and a later run starts where the last one ended', async () => {
    await a.call('/src/late', { method: 'PUT', body: { late: true } });
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst') });
    const [latest, previous] = run.body.history;
    assert.equal(latest.start_last_seq, previous.recorded_seq);
    // Counters go on from the previous session, as CouchDB's (`couch_replicator_stats:max_stats`).
    assert.equal(latest.missing_found - previous.missing_found, 1);
    const changes = await a.call('/src/_changes');
    assert.equal(run.body.source_last_seq, changes.body.last_seq);
    // A continuous job between the same ends has the same base id: its checkpoint documents are these.
    const live = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst'), continuous: true });
    await replicate({ replication_id: live.body._local_id, cancel: true });
    const baseId = String(live.body._local_id).split('+')[0];
    const [onSource, onTarget] = await Promise.all([a.call(`/src/_local/${baseId}`), b.call(`/dst/_local/${baseId}`)]);
    assert.equal(onSource.status, 200);
    const strip = ({ _id, _rev, ...body }: Record<string, unknown>): Record<string, unknown> => body;
    assert.deepEqual(strip(onSource.body), strip(onTarget.body), 'the same checkpoint on both ends');
    assert.equal(onSource.body.replication_id_version, 4);
    assert.equal(onSource.body.session_id, latest.session_id);
    assert.ok(onSource.body.history.length >= 2);
    assert.match(onSource.body.history[0].start_time, /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  });

  test('attachments travel with their documents, byte for byte', async () => {
    const bytes = Buffer.alloc(100 * 1024, 0);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    const put = await a.call('/src/with-att', { method: 'PUT', body: { _attachments: { 'blob.bin': { content_type: 'application/octet-stream', data: bytes.toString('base64') } } } });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst') });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const copied = await b.call('/dst/with-att?attachments=true');
    assert.ok(Buffer.from(copied.body._attachments['blob.bin'].data, 'base64').equals(bytes), 'same bytes');
    const [source, target] = await Promise.all([a.call('/src/with-att'), b.call('/dst/with-att')]);
    assert.deepEqual(target.body._attachments, source.body._attachments, 'same digest, length, revpos');
    // A new revision that keeps the attachment: the target already has it, the document still arrives.
    await a.call('/src/with-att', { method: 'PUT', body: { ...source.body, note: 'edited' } });
    const again = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('dst') });
    assert.equal(again.body.history[0].doc_write_failures, 0);
    assert.equal((await b.call('/dst/with-att')).body.note, 'edited');
  });

  test('doc_ids and selector replicate only what they name', async () => {
    const byIds = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('ids'), create_target: true, doc_ids: ['d01', 'd02'] });
    assert.equal(byIds.status, 200, JSON.stringify(byIds.body));
    assert.deepEqual((await b.call('/ids/_all_docs')).body.rows.map((row: { id: string }) => row.id), ['d01', 'd02']);
    const bySelector = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('sel'), create_target: true, selector: { n: { $gte: 27 } } });
    assert.equal(bySelector.status, 200, JSON.stringify(bySelector.body));
    assert.deepEqual((await b.call('/sel/_all_docs')).body.rows.map((row: { id: string }) => row.id), ['d27', 'd28', 'd29']);
  });

  test('a JavaScript filter of the source with query_params', async () => {
    await a.call('/src/_design/app', { method: 'PUT', body: { filters: { rem: 'function (doc, req) { return doc.n % 2 === Number(req.query.rem); }' } } });
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('odd'), create_target: true, filter: 'app/rem', query_params: { rem: '1' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const ids = (await b.call('/odd/_all_docs')).body.rows.map((row: { id: string }) => row.id);
    assert.deepEqual(ids, Array.from({ length: 15 }, (_, i) => `d${String(2 * i + 1).padStart(2, '0')}`));
  });

  test('the _view filter replicates only the documents the map function emits', async () => {
    await a.call('/src/_design/pick', { method: 'PUT', body: { views: { thirds: { map: 'function (doc) { if (doc.n % 3 === 0) emit(doc.n, null); }' } } } });
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('thirds'), create_target: true, filter: '_view', query_params: { view: 'pick/thirds' } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const ids = (await b.call('/thirds/_all_docs')).body.rows.map((row: { id: string }) => row.id);
    // d00's leaves (the conflict of the first test) have no `n`: not emitted, not copied.
    assert.deepEqual(ids, Array.from({ length: 9 }, (_, i) => `d${String(3 * (i + 1)).padStart(2, '0')}`), JSON.stringify(ids));
  });

  test('the _doc_ids filter named with its query_params, as CouchDB passes a `_` filter to _changes', async () => {
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('named-ids'), create_target: true, filter: '_doc_ids', query_params: { doc_ids: ['d03', 'd04'] } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.deepEqual((await b.call('/named-ids/_all_docs')).body.rows.map((row: { id: string }) => row.id), ['d03', 'd04']);
  });

  test('documents a validation function refuses are counted in doc_write_failures, the job completes', async () => {
    await b.call('/guarded', { method: 'PUT' });
    await b.call('/guarded/_design/guard', { method: 'PUT', body: { validate_doc_update: 'function (doc) { if (doc.n > 1) throw({forbidden: "too big"}); }' } });
    await b.call('/_users/org.couchdb.user:writer', { method: 'PUT', body: { name: 'writer', password: 'w-pass', roles: [], type: 'user' } });
    await b.call('/guarded/_security', { method: 'PUT', body: { admins: { names: [], roles: [] }, members: { names: ['writer'], roles: [] } } });
    const run = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('guarded', ['writer', 'w-pass']), doc_ids: ['d00', 'd01', 'd05'] });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    const [entry] = run.body.history;
    assert.equal(entry.docs_read, 4, 'd00 has two leaves');
    assert.equal(entry.doc_write_failures, 1, JSON.stringify(entry));
    assert.equal(entry.docs_written, 3);
    assert.equal((await b.call('/guarded/d05')).status, 404, 'refused: n > 1');
    assert.equal((await b.call('/guarded/d01')).status, 200, 'accepted');
    assert.equal((await b.call('/guarded/d00?conflicts=true')).body._conflicts.length, 1, 'both leaves of d00 accepted');
  });

  test('wrong remote credentials fail with 401 and a clear reason, and nothing is written', async () => {
    const wrongSource = await replicate({ source: a.dbUrl('src', ['boss', 'nope']), target: b.dbUrl('never'), create_target: true });
    assert.equal(wrongSource.status, 401);
    assert.deepEqual(wrongSource.body, { error: 'unauthorized', reason: `unauthorized to access or create database ${a.url}/src/` });
    const wrongTarget = await replicate({ source: a.dbUrl('src'), target: { url: `${b.url}/never`, auth: { basic: { username: 'boss', password: 'nope' } } }, create_target: true });
    assert.equal(wrongTarget.status, 401);
    assert.equal((await b.call('/never')).status, 404, 'the target was not created');
    const missing = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('absent') });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: 'db_not_found', reason: `could not open ${b.url}/absent/` });
  });

  test('an endpoint that is neither a URL nor a database name is refused, and bad options are 400', async () => {
    const local = await replicate({ source: 'ftp://files.example/src', target: b.dbUrl('x') });
    assert.equal(local.status, 400);
    assert.equal(local.body.reason, 'local_endpoints_not_supported');
    const exclusive = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('x'), doc_ids: ['a'], selector: { a: 1 } });
    assert.equal(exclusive.body.reason, '`selector`, `filter` and `doc_ids` are mutually exclusive');
    const anonymous = await a.call('/_replicate', { method: 'POST', body: { source: a.dbUrl('src'), target: b.dbUrl('x') }, auth: undefined as never });
    assert.equal(anonymous.status, 401);
  });

  test('no password reaches a log line, _scheduler or _active_tasks', async () => {
    const continuous = await replicate({ source: a.dbUrl('src'), target: b.dbUrl('live'), create_target: true, continuous: true });
    assert.equal(continuous.status, 202);
    assert.match(continuous.body._local_id, /^[0-9a-f]{32}\+continuous\+create_target$/);
    const jobs = await a.call('/_scheduler/jobs');
    const tasks = await a.call('/_active_tasks');
    assert.equal(jobs.body.jobs.length, 1);
    assert.equal(jobs.body.jobs[0].source, `${a.url}/src/`);
    assert.ok(tasks.body.some((task: { type: string }) => task.type === 'replication'));
    const cancelled = await replicate({ replication_id: continuous.body._local_id, cancel: true });
    assert.deepEqual(cancelled.body, { ok: true, _local_id: continuous.body._local_id });
    assert.equal((await a.call('/_scheduler/jobs')).body.total_rows, 0);
    assert.equal((await replicate({ replication_id: continuous.body._local_id, cancel: true })).status, 404);
    for (const text of [JSON.stringify(jobs.body), JSON.stringify(tasks.body), a.logs(), b.logs()]) {
      assert.ok(!text.includes(PASSWORD) && !text.includes('w-pass') && !text.includes('nope'), 'a secret leaked');
    }
  });
});
