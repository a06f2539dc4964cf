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
  // Bound once per method, not on every call: storage calls sit on every request's path.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(backend, {
    get(target, property) {
      if (Object.hasOwn(replaced, property)) return replaced[property as keyof Storage];
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (method === undefined || (method as { original?: unknown }).original !== value) {
        method = Object.assign((value as (...args: unknown[]) => unknown).bind(target), { original: value });
        bound.set(property, method);
      }
      return method;
    },
  });
}
