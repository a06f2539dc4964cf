import { infoWithSizes } from './database-sizes.js';
import { requireDbMember } from '../identity/authorization.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import type { Config } from '../config/config.js';
import type { Caller, DatabaseHooks, ReadFilter } from '../documents/database-hooks.js';
import { parseRev, renderRevision, type RenderOptions } from '../documents/document-json.js';
import { documentDeleted, documentMissing } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import { JsonText } from '../json/json-text.js';
import type {
  ChangeRow, ChangesOptions, DatabaseInfo, DocumentSummary, EditResult, LocalDocument,
  OpenedRevision,
  RangeOptions,
  RangeResult,
  RevisionQuery,
  RevisionTree,
  SecurityObject,
  Storage,
  StoredRevision,
} from '../storage/storage.js';
import { listConflicts } from '../revisions/revision-tree.js';
import type { HookRegistry } from './hook-registry.js';
import { withoutEncodingInfo } from '../attachments/encoding.js';
import { AccessScope } from './access-scope.js';
import { isAccessDb } from './document-access.js';
import { inlineAttachments, sinceGeneration, withFollows, type FollowingPart } from '../attachments/outgoing.js';

/** `?attachments=true` (with `atts_since`): which attachments a read inlines. */
interface AttachmentsWanted {
  since?: readonly string[];
  /** As parts after the document (`multipart/related`) rather than inline base64. */
  follows?: boolean;
}

/** What every opened database shares: storage, settings and the hooks registered at composition. */
export interface LayerContext {
  readonly storage: Storage;
  readonly config: Config;
  readonly hooks: HookRegistry;
  /** This node's `_active_tasks` (compactions, indexers, replications register here). */
  readonly tasks: ActiveTasks;
}

const EVERY_MEMBER = (): boolean => true;
const AS_STORED: ReadFilter = { single: (doc) => doc, listed: (doc) => doc, showsAsStored: EVERY_MEMBER };
// An attachment's encoding is no secret (`att_encoding_info=true` shows it to the same reader).
const WITHOUT_ENCODING_INFO: ReadFilter = { single: withoutEncodingInfo, listed: withoutEncodingInfo, showsAsStored: EVERY_MEMBER };
const CURRENT_REVISION = { revsInfo: false } as const;

/**
 * The text of a current revision shown without options or hooks, by the revision the storage
 * handed out: a frozen one (the SQLite backend's cache) is the same object until the document
 * changes, and can never change itself, so neither can its text.
 */
const plainTexts = new WeakMap<StoredRevision, JsonText>();

/** Chains the `afterDocRead` filters of several hooks (today at most one applies). */
function combinedFilter(filters: ReadFilter[]): ReadFilter {
  if (filters.length === 0) return AS_STORED;
  if (filters.length === 1) return filters[0]!;
  return {
    single: (doc) => filters.reduce<JsonObject | undefined>((shown, filter) => (shown === undefined ? undefined : filter.single(shown)), doc),
    listed: (doc) => filters.reduce((shown, filter) => filter.listed(shown), doc),
    showsAsStored: (member) => filters.every((filter) => (filter.showsAsStored === undefined ? member === '_id' : filter.showsAsStored(member))),
  };
}

/**
 * A database opened by one caller: its `_security`, what the caller is to it, its hooks. Every
 * read and write of a document goes through one (reads here, writes in document-writes.ts and
 * bulk-write.ts). Opened without the membership check only where a hook's `access` rule may let a
 * non-member reach a document; the reads and writes then check it per document.
 */
export class OpenedDatabase {
  readonly db: string;
  readonly security: SecurityObject;
  readonly caller: Caller;
  readonly hooks: readonly DatabaseHooks[];
  readonly context: LayerContext;
  // The read filters and views below are made when first needed: most requests that open a
  // database (a cached read, a write) never look at them.
  #filters: ReadFilter[] | undefined;
  #view: ReadFilter | undefined;
  #encodedView: ReadFilter | undefined;
  /** A non-admin of a database with per-document access reads only their documents (access-scope.ts). */
  readonly scope: AccessScope | undefined;

  constructor(db: string, security: SecurityObject, caller: Caller, context: LayerContext) {
    this.db = db;
    this.security = security;
    this.caller = caller;
    this.context = context;
    this.hooks = context.hooks.for(db);
    this.scope = isAccessDb(security) && !caller.isAdmin ? new AccessScope(context.storage, db, caller.userCtx, () => this.view) : undefined;
  }

  /** The hooks' `afterDocRead` filters for this caller. */
  get #readFilters(): ReadFilter[] {
    return (this.#filters ??= this.hooks.flatMap((hooks) => {
      const filter = hooks.afterDocRead?.(this.db, this.caller, this.security as unknown as JsonObject);
      return filter ? [filter] : [];
    }));
  }

  /** How the caller sees documents (the hooks' `afterDocRead`; attachment stubs without their encoding). */
  get view(): ReadFilter {
    return (this.#view ??= combinedFilter([...this.#readFilters, WITHOUT_ENCODING_INFO]));
  }

  /** `view` with the stubs' `encoding`/`encoded_length` kept (`att_encoding_info=true`). */
  get encodedView(): ReadFilter {
    return (this.#encodedView ??= combinedFilter(this.#readFilters));
  }

  get storage(): Storage {
    return this.context.storage;
  }

  /** A non-member reads `id` only where a hook's access rule allows it; otherwise 404 (the name stays unknown). */
  requireReadAccess(id: string): void {
    if (this.caller.isMember) return;
    if (!this.hooks.some((hooks) => hooks.access?.readsWithoutMembership(this.caller, id))) throw documentMissing();
  }

  /** A non-member writes only an update of a live document a hook's access rule gives them. */
  requireUpdateAccess(id: string, live: boolean): void {
    if (this.caller.isMember) return;
    if (live && this.hooks.some((hooks) => hooks.access?.updatesWithoutMembership(this.caller, id))) return;
    requireDbMember(this.caller.userCtx, this.security);
  }

  /**
   * One document (or one of its revisions: an older one until compaction, or with `latest` the leaf
   * it leads to) as the caller may see it: 404 `missing`/`deleted` otherwise.
   */
  async readDocument(
    id: string,
    rev: string | undefined,
    render: RenderOptions,
    read: { latest?: boolean; attachments?: AttachmentsWanted | undefined } = {},
  ): Promise<{ rev: string; doc: JsonObject; parts?: FollowingPart[] }> {
    this.requireReadAccess(id);
    const stored = await this.storage.readDocument(this.db, id, {
      ...(rev === undefined ? {} : { rev: parseRev(rev), latest: read.latest === true }),
      revsInfo: render.revsInfo === true,
    });
    if (!stored) throw documentMissing();
    if (stored.deleted && rev === undefined) throw documentDeleted();
    if (read.attachments?.follows) return { rev: stored.rev, ...this.shownWithFollows(stored, render, read.attachments.since) };
    return { rev: stored.rev, doc: await this.shownWithAttachments(stored, render, read.attachments) };
  }

  /**
   * `readDocument` of the current revision without options, as the text of its JSON reply: the
   * same bytes, serialised once per stored revision where no hook filters what the caller sees.
   */
  async readCurrentText(id: string): Promise<{ rev: string; text: JsonText }> {
    this.requireReadAccess(id);
    const stored = await this.storage.readDocument(this.db, id, CURRENT_REVISION);
    if (!stored) throw documentMissing();
    if (stored.deleted) throw documentDeleted();
    if (this.#readFilters.length > 0 || !Object.isFrozen(stored)) return { rev: stored.rev, text: JsonText.of(this.shown(stored, {})) };
    let text = plainTexts.get(stored);
    if (text === undefined) {
      text = JsonText.of(this.shown(stored, {}));
      plainTexts.set(stored, text);
    }
    return { rev: stored.rev, text };
  }

  /**
   * A shown revision whose attachments newer than `atts_since` are `follows: true` parts (multipart
   * answers): always with the stubs' encoding, as CouchDB's multipart answers, since compressed parts
   * travel as stored.
   */
  shownWithFollows(stored: StoredRevision, render: RenderOptions, since: readonly string[] | undefined): { doc: JsonObject; parts: FollowingPart[] } {
    const { doc, parts } = withFollows(this.shown(stored, { ...render, attEncodingInfo: true }), sinceGeneration(stored, since));
    // Nothing follows: the answer is plain JSON, shown as any other.
    return { doc: parts.length > 0 || render.attEncodingInfo ? doc : withoutEncodingInfo(doc), parts };
  }

  /** A shown revision with its attachments' data inlined (those newer than `atts_since`). */
  withAttachmentData(stored: StoredRevision, doc: JsonObject, wanted: AttachmentsWanted): Promise<JsonObject> {
    return inlineAttachments(this.storage.attachments, this.db, doc, sinceGeneration(stored, wanted.since));
  }

  /** `shown`, with the attachments' data inlined (decoded) when asked for. */
  async shownWithAttachments(stored: StoredRevision, render: RenderOptions, wanted: AttachmentsWanted | undefined): Promise<JsonObject> {
    if (!wanted) return this.shown(stored, render);
    const doc = await this.withAttachmentData(stored, this.shown(stored, { ...render, attEncodingInfo: true }), wanted);
    return render.attEncodingInfo ? doc : withoutEncodingInfo(doc);
  }

  /** The bytes of an attachment this database holds, as stored (after a read showed its digest). */
  async attachmentData(digest: string): Promise<AsyncIterable<Buffer>> {
    const data = await this.storage.attachments.read(this.db, digest);
    if (data === undefined) throw new Error(`attachment data ${digest} went missing`);
    return data;
  }

  /** Listing rows (`_all_docs`, `_changes` with `include_docs`): each row's `doc` with its attachments' data inline. */
  async inlineListedDocs(rows: readonly (JsonObject | undefined)[]): Promise<void> {
    for (const row of rows) {
      const doc = row?.['doc'];
      if (row && doc && typeof doc === 'object' && !Array.isArray(doc)) row['doc'] = await inlineAttachments(this.storage.attachments, this.db, doc, 0);
    }
  }

  /**
   * The read view of listed documents: with the stubs' encoding when asked (`att_encoding_info=true`,
   * as CouchDB's listings take it) or when their data is to be inlined (`inlineListedDocs` decodes).
   */
  listedView(inlined: boolean, encodingInfo = false): ReadFilter {
    return inlined || encodingInfo ? this.encodedView : this.view;
  }

  /** A stored revision as the caller may see it; 404 `missing` when it may not see it at all. */
  shown(stored: StoredRevision, render: RenderOptions): JsonObject {
    const visible = (render.attEncodingInfo ? this.encodedView : this.view).single(renderRevision(stored, render));
    if (visible === undefined) throw documentMissing();
    return visible;
  }

  async openRevisions(queries: readonly RevisionQuery[]): Promise<OpenedRevision[][]> {
    if (queries.length === 0) return [];
    const opened = await this.storage.openRevisions(this.db, queries);
    return this.scope ? this.scope.openRevisions(queries, opened) : opened;
  }

  /** Trees of the asked ids; an id no document can have (NUL) is unknown without asking storage. */
  async revisionTrees(ids: readonly string[]): Promise<(RevisionTree | undefined)[]> {
    const storable = ids.filter((id) => !id.includes('\u0000'));
    const stored = await this.storage.revisionTrees(this.db, storable);
    const trees = this.scope ? await this.scope.revisionTrees(storable, stored) : stored;
    const byId = new Map(storable.map((id, i) => [id, trees[i]]));
    return ids.map((id) => byId.get(id));
  }

  /**
   * Live non-winning leaves of the asked ids that have any (`conflicts=true` on `_all_docs`). Read
   * after the listing, so a write in between can show in them, as between CouchDB's shard reads.
   */
  async conflicts(ids: readonly string[]): Promise<Map<string, string[]>> {
    const trees = await this.revisionTrees(ids);
    return new Map(
      ids.flatMap((id, index): [string, string[]][] => {
        const tree = trees[index];
        const live = tree === undefined ? [] : listConflicts(tree).conflicts;
        return live.length > 0 ? [[id, live]] : [];
      }),
    );
  }

  /**
   * With `sizes`, also what the database takes (database-sizes.ts; scoped callers see their own
   * figures); `'recent'`: sizes that may lag the latest writes by a bounded few milliseconds.
   */
  async info(options: { sizes?: boolean | 'recent' } = {}): Promise<DatabaseInfo | undefined> {
    const info = options.sizes === undefined || options.sizes === false ? await this.storage.databaseInfo(this.db) : await infoWithSizes(this.storage, this.db, options.sizes === 'recent');
    return this.scope ? this.scope.info(info) : info;
  }

  listDocuments(options: RangeOptions): Promise<RangeResult> {
    return this.scope ? this.scope.listDocuments(options) : this.storage.listDocuments(this.db, options);
  }

  async lookupDocuments(ids: readonly string[], includeDocs: boolean): Promise<(DocumentSummary | undefined)[]> {
    const found = await this.storage.lookupDocuments(this.db, ids, includeDocs);
    return this.scope ? this.scope.lookupDocuments(ids, found) : found;
  }

  changes(options: ChangesOptions): Promise<ChangeRow[]> {
    return this.scope ? this.scope.changes(options) : this.storage.changes(this.db, options);
  }

  /** `pending` of `_changes`: the database's sequences after `last`, or the caller's rows in a scope. */
  async pendingAfter(last: number, updateSeq: () => Promise<number>): Promise<number> {
    return this.scope ? this.scope.pendingAfter(last) : Math.max(0, (await updateSeq()) - last);
  }

  /** `_local/` documents: no history, no hooks, not replicated, for members (in a scope, the caller's own). */
  async getLocal(id: string): Promise<LocalDocument | undefined> {
    const local = await this.storage.getLocal(this.db, this.scope ? this.scope.localId(id) : id);
    return local && { ...local, id };
  }

  async listLocal(): Promise<LocalDocument[]> {
    const locals = await this.storage.listLocal(this.db);
    return this.scope ? this.scope.ownLocals(locals) : locals;
  }

  writeLocal(id: string, body: JsonObject, rev: string | undefined, deleted: boolean): Promise<EditResult> {
    const stored = this.scope ? this.scope.localId(id) : id;
    return deleted ? this.storage.deleteLocal(this.db, stored, rev) : this.storage.putLocal(this.db, stored, body, rev);
  }
}
