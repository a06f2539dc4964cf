/**
 * Checkpoints in CouchDB's format (couch_replicator_scheduler_job `do_checkpoint`): the same
 * `_local/{replication id}` document on source and target, with `session_id`, `source_last_seq`,
 * `replication_id_version` and up to 50 `history` entries; a job resumes from the newest session
 * both ends share (`compare_replication_logs`), so a CouchDB job's checkpoints are resumed too.
 */
import type { Json, JsonObject } from '../json/json.js';
import { REPLICATION_ID_VERSION } from './replication-id.js';

export const MAX_HISTORY = 50;

export interface Stats {
  missing_checked: number;
  missing_found: number;
  docs_read: number;
  docs_written: number;
  doc_write_failures: number;
  bulk_get_docs: number;
  bulk_get_attempts: number;
}

export const emptyStats = (): Stats => ({
  missing_checked: 0,
  missing_found: 0,
  docs_read: 0,
  docs_written: 0,
  doc_write_failures: 0,
  bulk_get_docs: 0,
  bulk_get_attempts: 0,
});

const historyOf = (log: JsonObject | undefined): JsonObject[] =>
  Array.isArray(log?.['history']) ? (log['history'] as Json[]).filter((entry): entry is JsonObject => entry !== null && typeof entry === 'object' && !Array.isArray(entry)) : [];

/** Where to start (0 when the ends share no session) and the history to keep. */
export function compareLogs(source: JsonObject | undefined, target: JsonObject | undefined): { startSeq: Json; history: JsonObject[] } {
  if (source === undefined || target === undefined) return { startSeq: 0, history: [] };
  if (source['session_id'] !== undefined && source['session_id'] === target['session_id']) {
    return { startSeq: source['source_last_seq'] ?? 0, history: historyOf(source) };
  }
  let sourceRest = historyOf(source);
  let targetRest = historyOf(target);
  const has = (id: Json | undefined, entries: JsonObject[]): boolean => entries.some((entry) => entry['session_id'] === id);
  while (sourceRest.length > 0 && targetRest.length > 0) {
    const [s, ...sRest] = sourceRest as [JsonObject, ...JsonObject[]];
    const [t, ...tRest] = targetRest as [JsonObject, ...JsonObject[]];
    if (has(s['session_id'], targetRest)) return { startSeq: s['recorded_seq'] ?? 0, history: sRest };
    if (has(t['session_id'], sRest)) return { startSeq: t['recorded_seq'] ?? 0, history: tRest };
    sourceRest = sRest;
    targetRest = tRest;
  }
  return { startSeq: 0, history: [] };
}

/** The highest counters of the last session, so a resumed job keeps counting (couch_replicator_stats `max_stats`). */
export function statsOf(history: JsonObject[]): Stats {
  const stats = emptyStats();
  const last = history[0];
  if (last === undefined) return stats;
  for (const key of Object.keys(stats) as (keyof Stats)[]) {
    const value = last[key];
    if (typeof value === 'number') stats[key] = value;
  }
  return stats;
}

export interface Session {
  sessionId: string;
  startTime: Date;
  startSeq: Json;
  docIds: boolean;
}

const rfc1123 = (date: Date): string => date.toUTCString();

/** The body of the checkpoint document after a session reached `seq`. */
export function checkpointRecord(session: Session, seq: Json, stats: Stats, oldHistory: JsonObject[], now = new Date()): JsonObject {
  const entry: JsonObject = {
    session_id: session.sessionId,
    start_time: rfc1123(session.startTime),
    end_time: rfc1123(now),
    start_last_seq: session.startSeq,
    end_last_seq: seq,
    recorded_seq: seq,
    ...stats,
  };
  const record: JsonObject = { session_id: session.sessionId, source_last_seq: seq, replication_id_version: REPLICATION_ID_VERSION };
  if (session.docIds) {
    Object.assign(record, {
      start_time: entry['start_time']!,
      end_time: entry['end_time']!,
      docs_read: stats.docs_read,
      docs_written: stats.docs_written,
      doc_write_failures: stats.doc_write_failures,
    });
  }
  record['history'] = [entry, ...oldHistory].slice(0, MAX_HISTORY);
  return record;
}
