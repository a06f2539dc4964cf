/**
 * The embedded backend: one SQLite file per server (WAL, synchronous=FULL), every write acknowledged
 * after COMMIT, concurrent writes grouped into one transaction per event-loop turn.
 */
import { databaseMissing } from '../../errors/catalog.js';
import type {
  ChangeRow, CompactOptions, ChangesOptions, DatabaseInfo, DatabaseLimit, DocumentEdit, DocumentSummary, EditResult,
  IdRangeStats, JsonObject, LocalDocument, OpenedRevision, RangeOptions, RangeResult, ReadOptions, RevisionQuery,
  RevisionTree, SecurityObject, Storage, StoredRevision, WriteOptions,
} from '../storage.js';
import { DEFAULT_DOCUMENT_LIMITS } from '../storage.js';
import { COMPACTION_SLICE, compactInSlices, stemInSlices } from '../kit/compaction-slices.js';
import { databaseInfo, instanceStartTime } from '../kit/stored-rows.js';
import { decideLocalWrite, localDocument } from '../kit/local-revisions.js';
import { sliceEdits } from '../kit/write-slices.js';
import { openRevisions, readRevision, revisionTree, summarize } from './sqlite-queries.js';
import { reclaimSuperseded, stemTrees, writeEdits } from './sqlite-writer.js';
import { RangeQueries } from './sqlite-range-queries.js';
import { openConnection, type Connection } from './sqlite-connection.js';
import { prepareStatements, type Statements } from './sqlite-statements.js';
import { deepFreeze, WinnerCache } from './sqlite-read-cache.js';
import { HitCounts } from '../../metrics/hit-counts.js';
import type { PurgeRequest } from '../../revisions/purge-plan.js';
import { SqlitePurges } from './sqlite-purge.js';
import { WriteQueue } from './sqlite-write-queue.js';
import { Freshness } from './sqlite-freshness.js';
import { SqliteIndexStore } from './sqlite-index-store.js';
import { dropUnreachableChunks, SqliteAttachments, sweepUnreferenced } from './sqlite-attachments.js';
import { SqliteViewStore } from './sqlite-views.js';
import { SqliteSearchStore } from './sqlite-search.js';
import { SqliteAccessStore } from './sqlite-access.js';
import { deleteRowsOfDatabase } from './sqlite-database-removal.js';
import { LocalLocks, type NamedLocks } from '../../locks/named-locks.js';

export class SqliteStorage implements Storage {
  readonly kind = 'sqlite';
  readonly file: string;
  readonly #db: Connection;
  readonly #st: Statements;
  readonly #queue: WriteQueue;
  readonly #ranges: RangeQueries;
  readonly indexes: SqliteIndexStore;
  readonly attachments: SqliteAttachments;
  readonly views: SqliteViewStore;
  readonly search: SqliteSearchStore;
  readonly access: SqliteAccessStore;
  #closed = false;
  /** Database name → internal id and parsed `_security`, read on nearly every request. */
  readonly #idCache = new Map<string, number>();
  readonly #securityCache = new Map<string, SecurityObject>();
  /** Winning revisions recently read; every write of a document drops its entry first. */
  readonly #winners = new WinnerCache(32 * 1024 * 1024);
  readonly readCache = new HitCounts();
  readonly #purges: SqlitePurges;
  /** Changes whenever another connection (a sibling worker process) commits to the file. */
  readonly #freshness: Freshness;

  constructor(file: string, locks: NamedLocks) {
    this.file = file;
    this.#db = openConnection(file);
    this.#st = prepareStatements(this.#db);
    this.#queue = new WriteQueue(this.#db, locks);
    this.#purges = new SqlitePurges(this.#db, this.#st);
    this.#ranges = new RangeQueries(this.#db, this.#st.idBlocks);
    const idOf = (name: string): number => this.#read(() => this.#databaseId(name));
    this.indexes = new SqliteIndexStore(this.#db, this.#queue, idOf);
    this.attachments = new SqliteAttachments(this.#st, this.#queue, idOf);
    this.views = new SqliteViewStore(this.#db, this.#queue, idOf, locks);
    this.search = new SqliteSearchStore(this.#db, this.#queue, idOf, locks);
    this.access = new SqliteAccessStore(this.#db, (query, name) => this.#read(() => query(this.#databaseId(name))));
    this.#freshness = new Freshness(this.#db, () => {
      this.#idCache.clear();
      this.#securityCache.clear();
      this.#winners.clear();
    });
  }

  /** Transactions committed since opening; concurrent writes share one (group commit). */
  get committedTransactions(): number {
    return this.#queue.transactions;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#queue.close();
    this.#closed = true;
    this.#freshness.close();
    await this.search.close();
    this.#db.close();
    // Commits whose WAL sync is still running are answered before close settles.
    await this.#queue.synced();
  }

  async ping(): Promise<void> { this.#read(() => this.#st.ping.get()); }

  createDatabase(name: string, security: SecurityObject): Promise<boolean> {
    return this.#write(() => {
      this.#forget(name);
      return this.#st.insertDatabase.run(name, JSON.stringify(security), instanceStartTime()).changes === 1;
    });
  }

  deleteDatabase(name: string): Promise<boolean> {
    const deleted = this.#write(() => {
      this.#forget(name);
      const dbId = this.#st.databaseId.get(name);
      if (dbId === undefined) return false;
      deleteRowsOfDatabase(this.#db, this.#st, this.#purges, dbId);
      return true;
    });
    // The chunks go in a later transaction (see sqlite-chunk-file.ts); the caller need not wait for them.
    deleted.then((was) => (was ? this.#queue.enqueue(() => dropUnreachableChunks(this.#st)) : undefined)).catch(() => undefined);
    return deleted;
  }

  async listDatabases(): Promise<string[]> {
    return this.#read(() => this.#st.databaseNames.all());
  }

  async databaseInfo(name: string, options: { sizes?: boolean } = {}): Promise<DatabaseInfo | undefined> {
    const row = this.#read(() => (options.sizes === true ? this.#ranges.databaseWithSizes(name) : this.#st.databaseByName.get(name)));
    return row === undefined ? undefined : databaseInfo(row);
  }

  async getSecurity(db: string): Promise<SecurityObject | undefined> {
    this.#read(() => undefined);
    const cached = this.#securityCache.get(db);
    if (cached !== undefined) return cached;
    const row = this.#read(() => this.#st.databaseByName.get(db));
    if (row === undefined) return undefined;
    // Dropped by this process's writes, and by the freshness check when another process wrote.
    const security = deepFreeze(JSON.parse(row.security) as SecurityObject);
    this.#securityCache.set(db, security);
    return security;
  }

  putSecurity(db: string, security: SecurityObject): Promise<boolean> {
    return this.#write(() => {
      this.#forget(db);
      const dbId = this.#st.databaseId.get(db);
      if (dbId === undefined) return false;
      this.#st.updateSecurity.run(JSON.stringify(security), dbId);
      return true;
    });
  }

  async writeDocuments(db: string, edits: DocumentEdit[], options: WriteOptions): Promise<EditResult[]> {
    const [limits, results, slices] = [options.limits ?? DEFAULT_DOCUMENT_LIMITS, [] as EditResult[], sliceEdits(edits, options)];
    // One transaction per slice (write-slices.ts), other requests running between two; only the
    // last one's commit waits for the disk, which makes the earlier ones durable with it.
    for (const [at, slice] of slices.entries()) {
      const written = await this.#write(() => {
        const dbId = this.#databaseId(db);
        for (const edit of slice) this.#winners.delete(dbId, edit.id);
        return writeEdits(this.#st, dbId, slice.map((edit) => ({ edit, newEdits: options.newEdits, limits })));
      }, at === slices.length - 1);
      results.push(...written);
    }
    return results;
  }

  async readDocument(db: string, id: string, options: ReadOptions = {}): Promise<StoredRevision | undefined> {
    return this.#read(() => {
      const dbId = this.#databaseId(db);
      if (options.rev !== undefined || options.revsInfo === true) return readRevision(this.#st, dbId, id, options);
      const cached = this.#winners.get(dbId, id);
      this.readCache.record(cached !== undefined);
      if (cached !== undefined) return cached;
      const stored = readRevision(this.#st, dbId, id);
      if (stored !== undefined) this.#winners.set(dbId, id, stored);
      return stored;
    });
  }

  async listDocuments(db: string, options: RangeOptions): Promise<RangeResult> {
    return this.#read(() => {
      const row = this.#st.databaseByName.get(db);
      if (row === undefined) throw databaseMissing();
      return this.#ranges.listDocuments(row.db_id, row.doc_count, options);
    });
  }

  async idRangeStats(db: string, startKey: string, endKey: string): Promise<IdRangeStats> {
    return this.#read(() => this.#ranges.idRangeStats(this.#databaseId(db), startKey, endKey));
  }
  async lookupDocuments(db: string, ids: readonly string[], includeDocs: boolean): Promise<(DocumentSummary | undefined)[]> {
    return this.#read(() => {
      const dbId = this.#databaseId(db);
      return ids.map((id) => summarize(this.#st, dbId, id, includeDocs));
    });
  }

  async changes(db: string, options: ChangesOptions): Promise<ChangeRow[]> {
    return this.#read(() => this.#ranges.changes(this.#databaseId(db), options));
  }

  async openRevisions(db: string, queries: readonly RevisionQuery[]): Promise<OpenedRevision[][]> {
    return this.#read(() => {
      const dbId = this.#databaseId(db);
      return queries.map((query) => openRevisions(this.#st, dbId, query));
    });
  }

  async revisionTrees(db: string, ids: readonly string[]): Promise<(RevisionTree | undefined)[]> {
    return this.#read(() => {
      const dbId = this.#databaseId(db);
      return ids.map((id) => revisionTree(this.#st, dbId, id));
    });
  }

  async getLocal(db: string, id: string): Promise<LocalDocument | undefined> {
    return this.#read(() => {
      const row = this.#st.local.get(this.#databaseId(db), id);
      return row === undefined ? undefined : localDocument(id, row.rev, row.body);
    });
  }

  async listLocal(db: string): Promise<LocalDocument[]> {
    return this.#read(() => this.#st.localsOfDatabase.all(this.#databaseId(db)).map((row) => localDocument(row.id, row.rev, row.body)));
  }

  putLocal(db: string, id: string, body: JsonObject, rev: string | undefined): Promise<EditResult> {
    return this.#writeLocal(db, id, rev, body);
  }

  deleteLocal(db: string, id: string, rev: string | undefined): Promise<EditResult> {
    return this.#writeLocal(db, id, rev, undefined);
  }

  purgeDocuments(db: string, requests: readonly PurgeRequest[]): Promise<string[][]> {
    return this.#write(() => {
      const dbId = this.#databaseId(db);
      for (const { id } of requests) this.#winners.delete(dbId, id);
      return this.#purges.purge(dbId, requests);
    });
  }

  async purgedInfos(db: string): Promise<PurgeRequest[]> { return this.#read(() => this.#purges.purgedInfos(this.#databaseId(db))); }
  setDatabaseLimit(db: string, limit: DatabaseLimit, value: number): Promise<boolean> { return this.#write(() => this.#purges.setLimitOf(db, limit, value)); }

  async compact(db: string, options: CompactOptions = {}): Promise<number> {
    // One slice per write batch: other requests' writes and reads run between two slices. Trees
    // are stemmed first, so the bodies of the revisions stemmed away are reclaimed with the others.
    const forget = (id: string): void => this.#winners.delete(this.#databaseId(db), id);
    await stemInSlices((afterId) => this.#write(() => stemTrees(this.#st, this.#databaseId(db), afterId, COMPACTION_SLICE, forget)));
    const bytes = await compactInSlices(() => this.#write(() => reclaimSuperseded(this.#st, this.#databaseId(db), COMPACTION_SLICE)));
    if ((await this.#write(() => sweepUnreferenced(this.#st, this.#databaseId(db), options.graceMs))) > 0) {
      await this.#write(() => dropUnreachableChunks(this.#st));
    }
    return bytes;
  }

  /** A put (with `body`) or a delete of a local document, under the rules of local-revisions.ts. */
  #writeLocal(db: string, id: string, rev: string | undefined, body: JsonObject | undefined): Promise<EditResult> {
    return this.#write(() => {
      const dbId = this.#databaseId(db);
      const decision = decideLocalWrite(id, this.#st.local.get(dbId, id)?.rev, rev, body === undefined);
      if (!decision.apply) return decision.result;
      if (body === undefined) this.#st.deleteLocal.run(dbId, id);
      else this.#st.upsertLocal.run(dbId, id, decision.counter, JSON.stringify(body));
      return decision.result;
    });
  }

  #databaseId(name: string): number {
    const cached = this.#idCache.get(name);
    if (cached !== undefined) return cached;
    const dbId = this.#st.databaseId.get(name);
    if (dbId === undefined) throw databaseMissing();
    this.#idCache.set(name, dbId);
    return dbId;
  }

  /** Drops what is cached about a database; called inside every write that changes it. */
  #forget(name: string): void {
    this.#idCache.delete(name);
    this.#securityCache.delete(name);
  }

  outsideEvent(): void {
    this.#freshness.outsideEvent();
  }

  #read<T>(query: () => T): T {
    if (this.#closed) throw new Error('storage is closed');
    this.#freshness.beforeRead();
    return query();
  }

  /** Queues a write; inside its transaction (the file's write lock held), caches are checked first. */
  #write<T>(job: () => T, durable = true): Promise<T> {
    return this.#queue.enqueue(() => {
      this.#freshness.check();
      return job();
    }, durable);
  }
}

/** Opens (creating if needed) the SQLite file; throws a one-line `Error` when it cannot. `locks`: the server's (workers.md). */
export const openSqliteStorage = (file: string, locks: NamedLocks = new LocalLocks()): SqliteStorage => new SqliteStorage(file, locks);
