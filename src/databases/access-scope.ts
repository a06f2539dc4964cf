/**
 * What a non-admin caller of a database with per-document access (`_access`) reads of it: their own
 * documents, through the storage's per-principal orders (storage/access-store.ts), never the
 * database's. Counts and sequences come from their rows only: `doc_count` counts their documents,
 * `update_seq` and `last_seq` are the sequence of their latest row, `pending` counts their rows.
 */
import type { ReadFilter } from '../documents/database-hooks.js';
import { renderRevision } from '../documents/document-json.js';
import { accessDbAdminsOnly } from '../errors/catalog.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { ChangeRow, ChangesOptions, DatabaseInfo, DocumentSummary, LocalDocument, OpenedRevision, RangeOptions, RangeResult, RevisionQuery, RevisionTree, Storage, StoredRevision } from '../storage/storage.js';
import { DESIGN_PRINCIPAL } from '../storage/access-store.js';

/** Where a user's `_local/` documents live: a prefix of their own, so one user's checkpoints are theirs only. */
const LOCAL_PREFIX = '_local/_access:';

export class AccessScope {
  readonly #storage: Storage;
  readonly #db: string;
  readonly #userCtx: UserCtx;
  readonly #view: () => ReadFilter;
  /** The caller's name and roles, and the principal of the design documents every member reads. */
  readonly principals: readonly string[];

  constructor(storage: Storage, db: string, userCtx: UserCtx, view: () => ReadFilter) {
    this.#storage = storage;
    this.#db = db;
    this.#userCtx = userCtx;
    this.#view = view;
    const named = [userCtx.name ?? '', ...userCtx.roles].filter((principal) => principal !== DESIGN_PRINCIPAL);
    this.principals = [DESIGN_PRINCIPAL, ...new Set(named)];
  }

  /** `GET /{db}` for the caller: their counts and sequence; sizes and purges of the database stay hidden. */
  async info(info: DatabaseInfo | undefined): Promise<DatabaseInfo | undefined> {
    if (info === undefined) return undefined;
    const stats = await this.#storage.access.stats(this.#db, this.principals, 0);
    return { ...info, docCount: stats.docCount, deletedDocCount: stats.deletedDocCount, updateSeq: stats.updateSeq, dataSize: 0, compactableSize: 0, purgeSeq: 0 };
  }

  listDocuments(options: RangeOptions): Promise<RangeResult> {
    return this.#storage.access.listDocuments(this.#db, this.principals, options);
  }

  changes(options: ChangesOptions): Promise<ChangeRow[]> {
    return this.#storage.access.changes(this.#db, this.principals, options);
  }

  /** The sequence of the caller's latest row (`update_seq`, `since=now`). */
  async updateSeq(): Promise<number> {
    return (await this.#storage.access.stats(this.#db, this.principals, 0)).updateSeq;
  }

  /** The caller's rows after `last` (`pending`). */
  async pendingAfter(last: number): Promise<number> {
    return (await this.#storage.access.stats(this.#db, this.principals, last)).pendingAfter;
  }

  /** Whether the caller may read this revision (its own `_access`, or a design document). */
  #readable(stored: StoredRevision | undefined): boolean {
    return stored !== undefined && this.#view().single(renderRevision(stored)) !== undefined;
  }

  /** Whether the caller may read the current revision of `id` (tombstones included). */
  async #readableId(id: string): Promise<boolean> {
    return !id.includes('\u0000') && this.#readable(await this.#storage.readDocument(this.#db, id));
  }

  /** `_all_docs?keys=`: a document the caller cannot read answers as a missing one. */
  async lookupDocuments(ids: readonly string[], found: (DocumentSummary | undefined)[]): Promise<(DocumentSummary | undefined)[]> {
    return Promise.all(found.map(async (summary, i) => (summary !== undefined && (await this.#readableId(ids[i]!)) ? summary : undefined)));
  }

  /** `_revs_diff`: a document the caller cannot read is unknown, every asked revision missing. */
  async revisionTrees(ids: readonly string[], trees: (RevisionTree | undefined)[]): Promise<(RevisionTree | undefined)[]> {
    return Promise.all(trees.map(async (tree, i) => (tree !== undefined && (await this.#readableId(ids[i]!)) ? tree : undefined)));
  }

  /**
   * `open_revs` and `_bulk_get`: a document the caller cannot read is unknown; of one they can, a
   * revision whose own `_access` does not admit them is missing (or left out of `all`).
   */
  async openRevisions(queries: readonly RevisionQuery[], opened: OpenedRevision[][]): Promise<OpenedRevision[][]> {
    return Promise.all(
      opened.map(async (results, i) => {
        const query = queries[i]!;
        const visible = await this.#readableId(query.id);
        if (!visible) return query.revs === 'all' ? [] : query.revs.map((rev) => ({ missing: rev }));
        return results.flatMap((result): OpenedRevision[] => {
          if ('missing' in result || this.#readable(result.ok)) return [result];
          return query.revs === 'all' ? [] : [{ missing: result.ok.rev }];
        });
      }),
    );
  }

  /** Where the caller's `_local/…` documents are stored: `_local/_access:{name}/`. */
  #localPrefix(): string {
    const name = this.#userCtx.name;
    if (name === null) throw accessDbAdminsOnly();
    return `${LOCAL_PREFIX}${encodeURIComponent(name)}/`;
  }

  /** The stored id of the caller's `_local/…` document. */
  localId(id: string): string {
    return this.#localPrefix() + id.slice('_local/'.length);
  }

  /** `_local_docs`: the caller's own `_local/` documents, under the ids they wrote them with. */
  ownLocals(locals: readonly LocalDocument[]): LocalDocument[] {
    const prefix = this.#localPrefix();
    return locals.filter((local) => local.id.startsWith(prefix)).map((local) => ({ ...local, id: `_local/${local.id.slice(prefix.length)}` }));
  }
}
