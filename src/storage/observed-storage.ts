import type { DocumentEdit, EditResult, Storage, WriteOptions } from './storage.js';

/** What changed: document ids of one database, or the whole database (created or deleted). */
export type StorageChange = { db: string; ids: readonly string[] } | { db: string; ids: 'all' };

/**
 * Wraps a Storage so that every successful write is announced once, whichever endpoint made it;
 * caches derived from stored data (user credentials) subscribe here instead of trusting every
 * writer to remember them.
 */
export function observeStorage(storage: Storage, onChange: (change: StorageChange) => void): Storage {
  const announce = (change: StorageChange): void => {
    try {
      onChange(change);
    } catch {
      // A cache that fails to drop an entry must not turn a durable write into an error.
    }
  };
  const overrides: Partial<Storage> = {
    async writeDocuments(db: string, edits: DocumentEdit[], options: WriteOptions): Promise<EditResult[]> {
      const results = await storage.writeDocuments(db, edits, options);
      announce({ db, ids: edits.map((edit) => edit.id) });
      return results;
    },
    async createDatabase(...args: Parameters<Storage['createDatabase']>): Promise<boolean> {
      const created = await storage.createDatabase(...args);
      if (created) announce({ db: args[0], ids: 'all' });
      return created;
    },
    async deleteDatabase(db: string): Promise<boolean> {
      const deleted = await storage.deleteDatabase(db);
      if (deleted) announce({ db, ids: 'all' });
      return deleted;
    },
  };
  // Backends keep #private state, so every other method must run bound to the backend itself.
  return new Proxy(storage, {
    get(target, property) {
      if (typeof property === 'string' && Object.hasOwn(overrides, property)) return overrides[property as keyof Storage];
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
