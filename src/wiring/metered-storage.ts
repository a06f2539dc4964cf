import type { Metrics } from '../metrics/metrics.js';
import type { Storage } from '../storage/storage.js';

/**
 * The backend as the database layer sees it, counted: document reads (CouchDB's `database_reads`)
 * and the time each write takes until it is durable (`divan_storage_write_time_seconds`).
 */
export function meteredStorage(backend: Storage, metrics: Metrics): Storage {
  if (backend.readCache) metrics.watchCache('documents', backend.readCache);
  const writeDocuments: Storage['writeDocuments'] = async (db, edits, options) => {
    const started = process.hrtime.bigint();
    try {
      return await backend.writeDocuments(db, edits, options);
    } finally {
      metrics.storageWrite(Number(process.hrtime.bigint() - started) / 1e6);
    }
  };
  const readDocument: Storage['readDocument'] = (db, id, options) => {
    metrics.documentsRead(1);
    return backend.readDocument(db, id, options);
  };
  const openRevisions: Storage['openRevisions'] = (db, queries) => {
    metrics.documentsRead(queries.length);
    return backend.openRevisions(db, queries);
  };
  const replaced: Partial<Storage> = { writeDocuments, readDocument, openRevisions };
  return Object.assign(delegateTo(backend), replaced);
}

/**
 * An object answering every method of `target` (bound to it, once) and reading its other
 * properties through. Plain properties rather than a Proxy: storage calls sit on every request's
 * path, and a Proxy trap runs on each property read.
 */
function delegateTo(target: Storage): Storage {
  const delegate: Record<string, unknown> = {};
  for (let level: object | null = target; level !== null && level !== Object.prototype; level = Object.getPrototypeOf(level)) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name === 'constructor' || Object.hasOwn(delegate, name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(level, name)!;
      if (typeof descriptor.value === 'function') delegate[name] = (descriptor.value as (...args: unknown[]) => unknown).bind(target);
      else Object.defineProperty(delegate, name, { get: () => (target as unknown as Record<string, unknown>)[name], enumerable: true });
    }
  }
  return delegate as unknown as Storage;
}
