/**
 * Jobs from the documents of the `_replicator` database (couch_replicator_doc_processor): created
 * at start when missing, read in full at start (so jobs survive a restart) and followed through
 * its changes afterwards, on every node. A document in `completed` or `failed` state does not run
 * again; its end is written back as CouchDB 3 does (couch_replicator_docs): `_replication_state`,
 * `_replication_state_time`, and `_replication_stats` or `_replication_state_reason`. The live
 * state (`running`, `crashing`, `pending`) is shown by `_scheduler/docs`, not written.
 */
import type { Databases } from '../databases/databases.js';
import type { ChangeNotifier } from '../databases/change-notifier.js';
import { writeDocument } from '../databases/document-writes.js';
import { defaultSecurity } from '../databases/security.js';
import { isCouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import { infoOf, reasonOf, type Job } from './scheduler.js';
import type { Replicator } from './replicator.js';
import { LEASE_MS, Leases } from './leases.js';
import { shownUrlOf } from './shown-endpoint.js';
import { isObject } from '../documents/document-json.js';

export const REPLICATOR_DB = '_replicator';

const ENDED = new Set(['completed', 'failed']);
const STATE_FIELDS = ['_replication_state', '_replication_state_time', '_replication_state_reason', '_replication_stats', '_replication_id', '_rev'];

/** The document without what the replicator itself writes into it, to see whether the job changed. */
const specKey = (doc: JsonObject): string => JSON.stringify(Object.fromEntries(Object.entries(doc).filter(([key]) => !STATE_FIELDS.includes(key))));

interface Tracked {
  jobId?: string;
  key: string;
  /** A document that cannot run (malformed): why, for `_scheduler/docs`. */
  error?: string;
  /** The node running this document's job (several nodes on one PostgreSQL store). */
  elsewhere?: string;
  /** A document whose job ended (`completed`, `failed`), as its `_replication_*` fields say. */
  ended?: EndedJob;
}

/** A document's ended job as `_scheduler/docs` shows it (couch_replicator `info_from_doc`). */
interface EndedJob {
  state: string;
  id: Json | undefined;
  info: Json | undefined;
  source: string | null;
  target: string | null;
  startTime: Json;
  lastUpdated: Json;
}

const iso = (date: Date): string => date.toISOString().replace(/\.\d+Z$/, 'Z');

/** As the job showed it (endpoint.ts, CouchDB's `maybe_add_trailing_slash`), whichever worker answers. */
const withSlash = (url: string | null): string | null => (url === null || url.includes('?') || url.endsWith('/') ? url : `${url}/`);

/** The ended job a document in `completed` or `failed` state records. */
function endedOf(doc: JsonObject, state: string): EndedJob {
  const stats = isObject(doc['_replication_stats']) ? doc['_replication_stats'] : {};
  const { start_time: startTime, ...info } = stats;
  return {
    state,
    id: doc['_replication_id'],
    info: state === 'failed' ? { error: doc['_replication_state_reason'] ?? null } : info,
    source: withSlash(shownUrlOf(doc['source'])),
    target: withSlash(shownUrlOf(doc['target'])),
    startTime: startTime ?? null,
    lastUpdated: doc['_replication_state_time'] ?? null,
  };
}

export class ReplicatorDocs {
  readonly #databases: Databases;
  readonly #replicator: Replicator;
  readonly #log: Logger;
  readonly #docs = new Map<string, Tracked>();
  #since = 0;
  #unsubscribe: (() => void) | undefined;
  #reading: Promise<void> = Promise.resolve();
  #again = false;
  readonly #leases: Leases;
  #timer: NodeJS.Timeout | undefined;

  constructor(databases: Databases, replicator: Replicator, log: Logger, node: string) {
    this.#databases = databases;
    this.#replicator = replicator;
    this.#log = log;
    this.#leases = new Leases(databases, REPLICATOR_DB, node);
  }

  /** Creates `_replicator` when missing, runs its documents' jobs and follows its changes. */
  async start(changes: ChangeNotifier): Promise<void> {
    await this.#databases.ensure(REPLICATOR_DB, defaultSecurity('admin_only'));
    this.#unsubscribe = changes.subscribe(REPLICATOR_DB, () => this.#read());
    this.#read();
    await this.#reading;
    this.#timer = setInterval(() => this.#queue(() => this.#tend()), LEASE_MS / 3);
    this.#timer.unref();
  }

  /** Stops following the database and gives this node's leases up. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    await this.#reading;
    for (const docId of this.#leases.held()) await this.#leases.release(docId).catch(() => undefined);
  }

  tracked(): ReadonlyMap<string, Tracked> {
    return this.#docs;
  }

  /** Reads the changes since the last read; a wake-up during a read reads once more afterwards. */
  #read(): void {
    this.#again = true;
    this.#queue(async () => {
      while (this.#again) {
        this.#again = false;
        await this.#readChanges();
      }
    });
  }

  /** Runs `work` after what is already queued, so documents are reconciled one at a time. */
  #queue(work: () => Promise<void>): void {
    this.#reading = this.#reading.then(work).catch((error: unknown) => {
      this.#log.warning(`replicator: reading ${REPLICATOR_DB}: ${(error as Error).message}`);
    });
  }

  async #readChanges(): Promise<void> {
    const opened = await this.#databases.openAsServer(REPLICATOR_DB);
    for (;;) {
      const rows = await opened.changes({ since: this.#since, limit: 500, includeDocs: true });
      for (const row of rows) {
        this.#since = Math.max(this.#since, row.seq);
        if (!row.id.startsWith('_design/')) await this.#reconcile(row.id, row.deleted ? undefined : row.body);
      }
      if (rows.length < 500) return;
    }
  }

  async #reconcile(docId: string, doc: JsonObject | undefined): Promise<void> {
    const tracked = this.#docs.get(docId);
    if (doc === undefined) {
      await this.#drop(docId, tracked);
      this.#docs.delete(docId);
      return;
    }
    const key = specKey(doc);
    if (tracked && tracked.key === key) return;
    await this.#drop(docId, tracked);
    const state = doc['_replication_state'];
    if (typeof state === 'string' && ENDED.has(state)) {
      this.#docs.set(docId, { key, ended: endedOf(doc, state) });
      return;
    }
    await this.#run(docId, doc, key);
  }

  /** Starts the document's job where this node holds (or takes) its lease. */
  async #run(docId: string, doc: JsonObject, key: string): Promise<void> {
    try {
      const spec = this.#replicator.parse(doc);
      const { id, baseId } = await this.#replicator.idOf(spec);
      const holder = await this.#leases.claim(docId);
      if (holder) {
        this.#docs.set(docId, { key, elsewhere: holder.node });
        return;
      }
      const owner = typeof doc['owner'] === 'string' ? doc['owner'] : null;
      await this.#replicator.add(id, baseId, spec, { db: REPLICATOR_DB, docId, user: owner, capped: !this.#replicator.isConfiguredAdmin(owner) });
      this.#docs.set(docId, { key, jobId: id });
    } catch (error) {
      const reason = reasonOf(error);
      this.#docs.set(docId, { key, error: reason });
      // A job refused after its lease was taken (its owner's cap): the lease is not kept.
      await this.#leases.release(docId).catch(() => undefined);
      await this.#writeState(docId, { _replication_state: 'failed', _replication_state_reason: reason });
    }
  }

  async #drop(docId: string, tracked: Tracked | undefined): Promise<void> {
    if (tracked?.jobId) this.#replicator.scheduler.remove(tracked.jobId);
    await this.#leases.release(docId);
  }

  /** Renews this node's leases (a lost one stops its job) and takes over expired ones. */
  async #tend(): Promise<void> {
    for (const [docId, tracked] of [...this.#docs]) {
      if (tracked.jobId === undefined && tracked.elsewhere === undefined) continue;
      const holder = await this.#leases.claim(docId);
      if (holder && tracked.jobId !== undefined) {
        this.#replicator.scheduler.remove(tracked.jobId);
        this.#docs.set(docId, { key: tracked.key, elsewhere: holder.node });
      } else if (!holder && tracked.elsewhere !== undefined) {
        this.#docs.delete(docId);
        const doc = await this.#databases.current(REPLICATOR_DB, docId);
        if (doc) await this.#reconcile(docId, doc);
      }
    }
  }

  /** Writes a document job's end into its document. */
  async jobChanged(job: Job): Promise<void> {
    if (job.origin.db !== REPLICATOR_DB || job.origin.docId === undefined) return;
    if (job.state !== 'completed' && job.state !== 'failed') return;
    const info = infoOf(job);
    const tracked = this.#docs.get(job.origin.docId);
    if (tracked?.jobId === job.id) {
      delete tracked.jobId;
      const { source, target } = job.spec;
      tracked.ended = { state: job.state, id: job.id, info, source: source.url, target: target.url, startTime: iso(job.startTime), lastUpdated: iso(new Date()) };
    }
    const fields: JsonObject =
      job.state === 'completed'
        ? { _replication_state: 'completed', _replication_stats: { ...info, start_time: iso(job.startTime) }, _replication_id: job.id }
        : { _replication_state: 'failed', _replication_state_reason: job.lastError ?? 'failed', _replication_id: job.id };
    await this.#writeState(job.origin.docId, fields);
    await this.#leases.release(job.origin.docId);
  }

  async #writeState(docId: string, fields: JsonObject): Promise<void> {
    try {
      const current = await this.#databases.current(REPLICATOR_DB, docId);
      if (!current) return;
      const kept = Object.fromEntries(Object.entries(current).filter(([key]) => !key.startsWith('_replication_')));
      const body = { ...kept, ...fields, _replication_state_time: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      const tracked = this.#docs.get(docId);
      if (tracked) tracked.key = specKey(body);
      const opened = await this.#databases.openAsServer(REPLICATOR_DB);
      await writeDocument(opened, body, { id: docId, newEdits: true });
    } catch (error) {
      if (!isCouchError(error) || error.status !== 409) this.#log.warning(`replicator: updating ${REPLICATOR_DB}/${docId}: ${(error as Error).message}`);
    }
  }
}
