import type { JsonObject } from '../json/json.js';
import type { Storage } from '../storage/storage.js';
import type { DesignDoc } from '../js/sandbox.js';

/**
 * The design documents of each database that hold a given member (`validate_doc_update`), read once
 * and kept until a write to a `_design/` document of that database (on this node, or another
 * node's, told through the cluster) invalidates them. A listing that was under way when the
 * database changed is not kept.
 */
export class DesignDocCache {
  readonly #storage: Storage;
  readonly #lists = new Map<string, Promise<DesignDoc[]>>();
  readonly #generations = new Map<string, number>();

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  /** The live design documents of `db` holding `member`, in id order. */
  holding(db: string, member: string): Promise<DesignDoc[]> {
    const key = `${member}\u0000${db}`;
    let list = this.#lists.get(key);
    if (list === undefined) {
      const generation = this.#generations.get(db) ?? 0;
      list = readDesignDocs(this.#storage, db).then((docs) => docs.filter((doc) => doc[member] !== undefined));
      this.#lists.set(key, list);
      list.then(
        () => (this.#generations.get(db) ?? 0) !== generation && this.#lists.delete(key),
        () => this.#lists.delete(key),
      );
    }
    return list;
  }

  invalidate(db: string): void {
    this.#generations.set(db, (this.#generations.get(db) ?? 0) + 1);
    for (const key of [...this.#lists.keys()]) if (key.endsWith(`\u0000${db}`)) this.#lists.delete(key);
  }
}

/** Every live design document of `db`, with `_id` and `_rev`. */
async function readDesignDocs(storage: Storage, db: string): Promise<DesignDoc[]> {
  // `0` sorts right after `/`, so this range is exactly the ids that start with `_design/`.
  const { rows } = await storage.listDocuments(db, { startKey: '_design/', endKey: '_design0', inclusiveEnd: false, includeDocs: true });
  return rows
    .filter((row) => !row.deleted && row.body !== undefined)
    .map((row) => ({ _id: row.id, _rev: row.rev, ...(row.body as JsonObject) }) as DesignDoc);
}
