/**
 * The per-database hooks of docs/architecture.md: the database layer (databases/) calls them on
 * every document write and read, and the modules holding a database's own rules (users/ for the
 * users databases, databases/ for the rest) implement them. A leaf, so that users/ can implement
 * hooks without importing the layer that calls them.
 */
import type { UserCtx } from '../identity/user-ctx.js';
import type { JsonObject } from '../json/json.js';

/** Who reads or writes, and what the database's `_security` makes of them. */
export interface Caller {
  readonly userCtx: UserCtx;
  /** A server admin, or an admin of this database. */
  readonly isAdmin: boolean;
  /** A member of this database (admins are members). */
  readonly isMember: boolean;
}

/** One write request (a single document or a `_bulk_docs` batch) as `beforeDocUpdate` sees it. */
export interface UpdateBatch {
  readonly db: string;
  readonly caller: Caller;
  /** The database's `_security` object. */
  readonly secObj: JsonObject;
  /** The stored winning revision with `_id` and `_rev`; undefined when missing or deleted. Read once per id. */
  current(id: string): Promise<JsonObject | undefined>;
}

/**
 * One document on its way to storage: the full incoming object (`_id`, `_rev`, `_deleted` and the
 * body) in, the object to store out; a thrown CouchError refuses this document only.
 */
export type DocUpdateStep = (doc: JsonObject) => Promise<JsonObject>;

/** A document about to be stored, as a validation function sees it, and the stored revision it replaces. */
export interface Proposed {
  /** `_id`, `_rev` (the edited revision; the new one for a replicated edit), `_deleted`, the body. */
  readonly doc: JsonObject;
  /** The stored revision being replaced (`_deleted` when a tombstone), null when none. */
  readonly oldDoc: JsonObject | null;
}

/**
 * Checks the documents of one write request after every `beforeDocUpdate` step, all at once (one
 * round trip to the JavaScript sandbox per batch): one refusal, or undefined, per document.
 */
export type DocValidation = (proposed: readonly Proposed[]) => Promise<(Error | undefined)[]>;

/** How one caller sees the documents of one database (CouchDB's `after_doc_read`). */
export interface ReadFilter {
  /** A document read on its own: undefined when hidden (answer 404); may throw 403. */
  single(doc: JsonObject): JsonObject | undefined;
  /** A document inside a listing row, whose id and revision the row shows anyway. */
  listed(doc: JsonObject): JsonObject;
  /**
   * True when `listed` shows this top-level member of every document as stored, whoever owns it:
   * queries (Mango indexes, sorts) use stored values of such members only. Absent: only `_id`.
   */
  showsAsStored?(member: string): boolean;
}

/** What a durable write changed: some documents of `db`, or the whole database (created, deleted). */
export interface Written {
  readonly db: string;
  readonly ids: readonly string[] | 'all';
}

/** Who may reach a document of this database without being one of its members. */
interface DocumentAccess {
  /** Throws for a document path the caller may not touch at all, before anything else is looked at. */
  refusePath(id: string, caller: Caller): void;
  /** A non-member may still read: `id` (or, without an id, any document of the database). */
  readsWithoutMembership(caller: Caller, id?: string): boolean;
  /** A non-member may still update the live document `id`. */
  updatesWithoutMembership(caller: Caller, id: string): boolean;
}

/** The rules of some databases, registered at composition (app.ts). */
export interface DatabaseHooks {
  /** For logs and docs: what these rules are. */
  readonly name: string;
  appliesTo(db: string): boolean;
  readonly access?: DocumentAccess;
  /** Called once per write request; returns the step every document of it passes, in order. */
  beforeDocUpdate?(batch: UpdateBatch): Promise<DocUpdateStep | undefined>;
  /** A design document about to be stored (by an admin): throws when it would not work (its functions do not compile). */
  checkDesign?(doc: JsonObject): Promise<void>;
  /** Called once per write request of normal documents (not `_design/`, not `_local/`). */
  validateUpdates?(batch: UpdateBatch): Promise<DocValidation | undefined>;
  /** Undefined when this caller sees the documents as stored. */
  afterDocRead?(db: string, caller: Caller, secObj: JsonObject): ReadFilter | undefined;
  /** After a durable write; a failure is logged, never turned into an error of the write. */
  afterWrite?(written: Written): Promise<void> | void;
}
