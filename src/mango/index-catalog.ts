/**
 * The json indexes of a database, read from its design documents and kept per database until its
 * update sequence moves (any write, on any node, moves it), so a `_find` on a database that is not
 * being written costs one small read here instead of a listing of its design documents.
 */
import type { OpenedDatabase } from '../databases/opened-database.js';
import { indexesOfDesignDoc, type MangoIndex } from './index-definitions.js';
import { designPartitioned } from '../databases/partitions.js';

/** Databases whose indexes are kept, per storage. */
const MAX_CACHED_DATABASES = 1000;

interface Cached {
  seq: number;
  indexes: MangoIndex[];
}

const catalogs = new WeakMap<object, Map<string, Cached>>();

async function readIndexes(opened: OpenedDatabase): Promise<MangoIndex[]> {
  const designs = await opened.listDocuments({ startKey: '_design/', endKey: '_design0', inclusiveEnd: false, includeDocs: true, countOffset: false });
  return designs.rows.flatMap((row) => (row.body === undefined ? [] : indexesOfDesignDoc(row.id, row.body, designPartitioned(opened.security, row.body))));
}

/** The database's json indexes and its update sequence when they were read. */
export async function catalog(opened: OpenedDatabase): Promise<Cached> {
  const seq = (await opened.info())?.updateSeq ?? 0;
  let byDb = catalogs.get(opened.storage);
  if (byDb === undefined) {
    byDb = new Map();
    catalogs.set(opened.storage, byDb);
  }
  const cached = byDb.get(opened.db);
  if (cached !== undefined && cached.seq === seq) return cached;
  const fresh = { seq, indexes: await readIndexes(opened) };
  byDb.delete(opened.db);
  if (byDb.size >= MAX_CACHED_DATABASES) byDb.delete(byDb.keys().next().value!);
  byDb.set(opened.db, fresh);
  return fresh;
}

/** The json indexes of a database, from its design documents. */
export async function listIndexes(opened: OpenedDatabase): Promise<MangoIndex[]> {
  return (await catalog(opened)).indexes;
}
