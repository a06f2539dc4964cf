/**
 * The search writer's thread (sqlite-search-writer.ts): its own connection to the server's SQLite
 * file, on which it stores each batch it is sent in one transaction (`BEGIN IMMEDIATE`), without an
 * fsync of its own (synchronous = NORMAL, as view and search batches always were: a batch lost to a
 * power cut goes with its sequence and is indexed again). It writes only while the sending process
 * holds the write lease, so it meets no other writer but one outside the server (busy timeout).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SearchDocument } from '../search-store.js';
import { openBetterSqlite3 } from './better-sqlite3-driver.js';
import { applySearchUpdate } from './sqlite-search-writes.js';
import { StatementCache } from './sqlite-statement-cache.js';

export interface SearchBatch {
  readonly id: number;
  readonly index: number;
  readonly documents: readonly SearchDocument[];
  readonly updateSeq: number;
}

export type SearchBatchAnswer = { readonly id: number; readonly error?: string };

const db = openBetterSqlite3((workerData as { file: string }).file, { busyTimeoutMs: 5000 });
db.pragma('synchronous = NORMAL');
const statements = new StatementCache(db);
const store = db.transaction((batch: SearchBatch) => applySearchUpdate(statements, batch.index, batch.documents, batch.updateSeq));

parentPort!.on('message', (batch: SearchBatch) => {
  try {
    store.immediate(batch);
    parentPort!.postMessage({ id: batch.id } satisfies SearchBatchAnswer);
  } catch (error) {
    parentPort!.postMessage({ id: batch.id, error: error instanceof Error ? error.message : String(error) } satisfies SearchBatchAnswer);
  }
});
