import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkpointRecord, compareLogs, emptyStats, MAX_HISTORY } from '../../../src/replicator/checkpoints.js';

const entry = (session: string, seq: number) => ({ session_id: session, recorded_seq: seq });

test('the same session on both ends resumes from source_last_seq', () => {
  const log = { session_id: 's2', source_last_seq: 9, history: [entry('s2', 9), entry('s1', 4)] };
  assert.deepEqual(compareLogs(log, { ...log }), { startSeq: 9, history: log.history });
});

test('different sessions: the newest entry both histories share (compare_rep_history)', () => {
  const source = { session_id: 's3', source_last_seq: 12, history: [entry('s3', 12), entry('s2', 9), entry('s1', 4)] };
  const target = { session_id: 'sX', source_last_seq: 7, history: [entry('sX', 7), entry('s2', 9), entry('s1', 4)] };
  assert.deepEqual(compareLogs(source, target), { startSeq: 9, history: [entry('s1', 4)] });
  assert.deepEqual(compareLogs(source, { session_id: 'z', history: [entry('z', 1)] }), { startSeq: 0, history: [] });
  assert.deepEqual(compareLogs(undefined, target), { startSeq: 0, history: [] });
});

test('a record has CouchDB fields, doc_ids extras, and at most 50 history entries', () => {
  const session = { sessionId: 'new', startTime: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), startSeq: 3, docIds: true };
  const old = Array.from({ length: 60 }, (_, i) => entry(`old${i}`, i));
  const record = checkpointRecord(session, '17-abc', { ...emptyStats(), docs_written: 4 }, old, new Date(Date.UTC(2026, 0, 2, 3, 5, 0)));
  assert.equal(record['source_last_seq'], '17-abc');
  assert.equal(record['replication_id_version'], 4);
  assert.equal(record['docs_written'], 4, 'doc_ids replications repeat counters at the top, as 1.0.x did');
  const history = record['history'] as Record<string, unknown>[];
  assert.equal(history.length, MAX_HISTORY);
  assert.deepEqual(Object.keys(history[0]!), ['session_id', 'start_time', 'end_time', 'start_last_seq', 'end_last_seq', 'recorded_seq', 'missing_checked', 'missing_found', 'docs_read', 'docs_written', 'doc_write_failures', 'bulk_get_docs', 'bulk_get_attempts']);
  assert.equal(history[0]!['start_time'], 'Fri, 02 Jan 2026 03:04:05 GMT');
});
