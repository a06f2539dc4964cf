/**
 * The shared backend: several Divan nodes on one PostgreSQL database (one schema). Semantics are the
 * SQLite backend's; what changes is that other nodes write at the same time:
 *
 * - every write transaction first locks its database row (`FOR NO KEY UPDATE`), then its document
 *   rows (`FOR UPDATE`), and allocates update sequences by incrementing that row, so writers of one
 *   database are serialised across nodes: two edits of one revision give one success and one
 *   conflict whichever nodes made them, and no sequence is handed out twice;
 * - a write is answered after COMMIT (synchronous_commit=on, PostgreSQL's default);
 * - concurrent writes to one database on one node share a transaction (`WriteLanes`).
 *
 * @example
 * const storage = await openPostgresStorage({ url: 'postgresql://divan@db.internal/divan' })
 * await storage.createDatabase('db', { admins: { names: [], roles: [] }, members: { names: [], roles: [] } })
 * await storage.close()
 */
import { purgedInfos } from './postgres-purge.js';
import type pg from 'pg';
import type {
  ChangeRow, CompactOptions, ChangesOptions, DatabaseInfo, DatabaseLimit, PurgeRequest, DocumentEdit,
  DocumentSummary, EditResult, IdRangeStats, JsonObject, LocalDocument, OpenedRevision, RangeOptions, RangeResult, ReadOptions,
  RevisionQuery, RevisionTree, SecurityObject, Storage, StoredRevision, WriteOptions,
} from '../storage.js';
import { PostgresAttachments, sweepUnreferenced } from './postgres-attachments.js';
import { DEFAULT_DOCUMENT_LIMITS } from '../storage.js';
import { COMPACTION_SLICE, compactInSlices, stemInSlices, type ReclaimedSlice, type StemmedSlice } from '../kit/compaction-slices.js';
import { databaseInfo, storedSizeColumns, type DatabaseRow } from '../kit/stored-rows.js';
import { sliceEdits } from '../kit/write-slices.js';
import { createPool } from './postgres-connection.js';
import { reasonOf, redactUrl } from '../../log/redaction.js';
import { migrate } from './postgres-schema.js';
import * as queries from './postgres-queries.js';
import * as rangeQueries from './postgres-range-queries.js';
import { executeBatch, type WriteJob } from './postgres-write-jobs.js';
import { WriteLanes } from './postgres-write-queue.js';
import { PostgresIndexStore } from './postgres-index-store.js';
import { PostgresViewStore } from './postgres-views.js';
import { PostgresSearchStore } from './postgres-search.js';
import { PostgresAccessStore } from './postgres-access.js';

interface PostgresStorageOptions {
  /** `postgresql://user:password@host:port/database?…` (libpq URL; `sslmode` etc. as `pg` reads them). */
  url: string;
  /** Schema holding Divan's tables, created when missing; default `public`. */
  schema?: string;
  /** Connections per node (reads and write transactions share them); default 10. */
  poolSize?: number;
  /** Limit on opening a connection, or on waiting for a free one; default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Limit on `ping()`; default 2 000 ms. */
  pingTimeoutMs?: number;
  /** Told about connections that failed while idle (they are dropped and replaced); default: ignored. */
  onError?: (error: Error) => void;
}

export class PostgresStorage implements Storage {
  readonly kind = 'postgres';
  /** The schema this storage uses. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly attachments: PostgresAttachments;
  readonly #lanes: WriteLanes<WriteJob>;
  readonly #pingTimeoutMs: number;
  readonly indexes: PostgresIndexStore;
  readonly views: PostgresViewStore;
  readonly search: PostgresSearchStore;
  readonly access: PostgresAccessStore;
  #closed = false;
  #closing: Promise<void> | undefined;

  /** Use `openPostgresStorage`, which also checks the connection and migrates the schema. */
  constructor(pool: pg.Pool, schema: string, pingTimeoutMs: number) {
    this.#pool = pool;
    this.schema = schema;
    this.#pingTimeoutMs = pingTimeoutMs;
    this.#lanes = new WriteLanes(pool, executeBatch);
    this.indexes = new PostgresIndexStore(pool, () => this.#checkOpen());
    this.attachments = new PostgresAttachments(pool);
    this.views = new PostgresViewStore(pool, schema);
    this.search = new PostgresSearchStore(pool, schema);
    this.access = new PostgresAccessStore(pool, () => this.#checkOpen());
  }

  /** Transactions committed since opening; concurrent writes to one database share one. */
  get committedTransactions(): number {
    return this.#lanes.transactions;
  }

  /** Answers the writes already queued, then closes every connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#lanes.close();
      await this.#pool.end();
    })();
    return this.#closing;
  }

  async ping(): Promise<void> {
    this.#checkOpen();
    let timer: NodeJS.Timeout | undefined;
    const query = this.#pool.query('SELECT 1');
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`PostgreSQL did not answer within ${this.#pingTimeoutMs} ms`)), this.#pingTimeoutMs);
    });
    try {
      await Promise.race([query, timeout]);
    } catch (error) {
      query.catch(() => undefined);
      throw new Error(`PostgreSQL is unreachable: ${reasonOf(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  createDatabase(name: string, security: SecurityObject): Promise<boolean> {
    return this.#write(name, { kind: 'create', security });
  }

  deleteDatabase(name: string): Promise<boolean> {
    return this.#write(name, { kind: 'delete' });
  }

  async listDatabases(): Promise<string[]> {
    this.#checkOpen();
    const { rows } = await this.#pool.query<{ name: string }>('SELECT name FROM databases ORDER BY name');
    return rows.map((row) => row.name);
  }

  async databaseInfo(name: string, options: { sizes?: boolean } = {}): Promise<DatabaseInfo | undefined> {
    this.#checkOpen();
    const sizes = options.sizes === true ? `, ${storedSizeColumns((column) => `octet_length(${column})`, 'v.leaf')}` : '';
    const { rows } = await this.#pool.query<Omit<DatabaseRow, 'db_id' | 'security'>>(
      `SELECT name, doc_count, deleted_doc_count, update_seq, data_size, compactable_size, instance_start_time,
         revs_limit, purged_infos_limit, purge_seq${sizes}
       FROM databases t WHERE name = $1`,
      [name],
    );
    return rows.length === 0 ? undefined : databaseInfo(rows[0]);
  }

  async getSecurity(db: string): Promise<SecurityObject | undefined> {
    this.#checkOpen();
    const { rows } = await this.#pool.query<{ security: string }>('SELECT security FROM databases WHERE name = $1', [db]);
    return rows.length === 0 ? undefined : (JSON.parse(rows[0].security) as SecurityObject);
  }

  putSecurity(db: string, security: SecurityObject): Promise<boolean> {
    return this.#write(db, { kind: 'security', security });
  }

  async writeDocuments(db: string, edits: DocumentEdit[], options: WriteOptions): Promise<EditResult[]> {
    const limits = options.limits ?? DEFAULT_DOCUMENT_LIMITS;
    const results: EditResult[] = [];
    // One transaction per slice (see write-slices.ts), other requests running between two; only the
    // last one's commit waits for the WAL flush, which makes the earlier ones durable with it.
    const slices = sliceEdits(edits, options);
    for (const [at, slice] of slices.entries()) {
      results.push(...(await this.#write<EditResult[]>(db, { kind: 'documents', edits: slice, newEdits: options.newEdits, limits, durable: at === slices.length - 1 })));
    }
    return results;
  }

  async readDocument(db: string, id: string, options: ReadOptions = {}): Promise<StoredRevision | undefined> {
    this.#checkOpen();
    return queries.readRevision(this.#pool, db, id, options);
  }

  async listDocuments(db: string, options: RangeOptions): Promise<RangeResult> {
    this.#checkOpen();
    return rangeQueries.listDocuments(this.#pool, db, options);
  }

  async idRangeStats(db: string, startKey: string, endKey: string): Promise<IdRangeStats> {
    this.#checkOpen();
    return rangeQueries.idRangeStats(this.#pool, db, startKey, endKey);
  }

  async lookupDocuments(
    db: string,
    ids: readonly string[],
    includeDocs: boolean,
  ): Promise<(DocumentSummary | undefined)[]> {
    this.#checkOpen();
    return queries.lookupDocuments(this.#pool, db, ids, includeDocs);
  }

  async changes(db: string, options: ChangesOptions): Promise<ChangeRow[]> {
    this.#checkOpen();
    return rangeQueries.changes(this.#pool, db, options);
  }

  async openRevisions(db: string, revisionQueries: readonly RevisionQuery[]): Promise<OpenedRevision[][]> {
    this.#checkOpen();
    return queries.openRevisions(this.#pool, db, revisionQueries);
  }

  async revisionTrees(db: string, ids: readonly string[]): Promise<(RevisionTree | undefined)[]> {
    this.#checkOpen();
    return queries.revisionTrees(this.#pool, db, ids);
  }

  async getLocal(db: string, id: string): Promise<LocalDocument | undefined> {
    this.#checkOpen();
    return queries.getLocal(this.#pool, db, id);
  }

  async listLocal(db: string): Promise<LocalDocument[]> {
    this.#checkOpen();
    return queries.listLocal(this.#pool, db);
  }

  putLocal(db: string, id: string, body: JsonObject, rev: string | undefined): Promise<EditResult> {
    return this.#write(db, { kind: 'local', id, rev, body });
  }

  deleteLocal(db: string, id: string, rev: string | undefined): Promise<EditResult> {
    return this.#write(db, { kind: 'local', id, rev, body: undefined });
  }

  purgeDocuments(db: string, requests: readonly PurgeRequest[]): Promise<string[][]> {
    return this.#write<string[][]>(db, { kind: 'purge', requests });
  }

  async purgedInfos(db: string): Promise<PurgeRequest[]> {
    this.#checkOpen();
    return purgedInfos(this.#pool, db);
  }

  setDatabaseLimit(db: string, limit: DatabaseLimit, value: number): Promise<boolean> {
    return this.#write<boolean>(db, { kind: 'limit', limit, value });
  }

  async compact(db: string, options: CompactOptions = {}): Promise<number> {
    // One slice per lane batch: the database row is locked for one slice at a time. Trees are
    // stemmed first, so the bodies of the revisions stemmed away are reclaimed with the others.
    await stemInSlices((afterId) => this.#write<StemmedSlice>(db, { kind: 'stem', afterId, limit: COMPACTION_SLICE }));
    const bytes = await compactInSlices(() => this.#write<ReclaimedSlice>(db, { kind: 'compact', limit: COMPACTION_SLICE }));
    await sweepUnreferenced(this.#pool, db, options.graceMs);
    return bytes;
  }

  #checkOpen(): void {
    if (this.#closed) throw new Error('storage is closed');
  }

  #write<T>(db: string, job: WriteJob): Promise<T> {
    return this.#lanes.enqueue<T>(db, job);
  }
}

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_PING_TIMEOUT_MS = 2_000;

/**
 * Connects, brings the schema up to date (safe when several nodes start at once) and returns the
 * storage. Rejects with a one-line `Error` that names the server but never its password.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const schema = options.schema ?? 'public';
  const where = redactUrl(options.url);
  let pool: pg.Pool;
  try {
    pool = createPool({
      url: options.url,
      schema,
      poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      onError: options.onError ?? (() => undefined),
    });
  } catch (error) {
    // An unparsable URL is refused by pg before any connection.
    throw new Error(`cannot connect to PostgreSQL at ${where}: ${reasonOf(error, options.url)}`);
  }
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot connect to PostgreSQL at ${where}: ${reasonOf(error, options.url)}`);
  }
  // A checked-out client has no listener of the pool's: a disconnect must not become an uncaught 'error'.
  const ignore = (): void => undefined;
  client.on('error', ignore);
  try {
    await migrate(client, schema);
    client.removeListener('error', ignore);
    client.release();
  } catch (error) {
    client.removeListener('error', ignore);
    client.release(true);
    await pool.end().catch(() => undefined);
    throw new Error(`cannot migrate schema "${schema}" of PostgreSQL at ${where}: ${reasonOf(error, options.url)}`);
  }
  return new PostgresStorage(pool, schema, options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS);
}
