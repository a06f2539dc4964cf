import { isDbAdmin } from '../identity/authorization.js';
import type { UserCtx } from '../identity/user-ctx.js';
import type { Config } from '../config/config.js';
import { renderRevision, validateDocumentId } from '../documents/document-json.js';
import type { JsonObject, SecurityObject, Storage } from '../storage/storage.js';
import { iterationLimits } from './hash-cost.js';
import { filterUserRead, listedUserDoc, prepareUserWrite, type HashSettings, type WriterContext } from './user-documents.js';

/**
 * How one caller sees the documents of one database. Every read path that returns document bodies
 * (GET, `open_revs`, `_bulk_get`, `_all_docs` and `_changes` with `include_docs`, and what a
 * `_selector` filter is matched against) takes them through the reader `UsersDatabase.readerFor`
 * gives, so a users database shows the same thing whichever way it is read.
 */
export interface DocumentReader {
  /** A document read on its own: undefined when hidden (answer 404); throws 403 for a users-db design doc. */
  single(doc: JsonObject): JsonObject | undefined;
  /** A document inside a listing row, whose id and revision the row shows anyway. */
  listed(doc: JsonObject): JsonObject;
}

const AS_STORED: DocumentReader = { single: (doc) => doc, listed: (doc) => doc };

/**
 * The users database as a service: which database it is, the settings its hashing uses, and the
 * one path every user-document write takes (hash, validate, then store the same object).
 */
export class UsersDatabase {
  readonly #storage: Storage;
  readonly #config: Config;

  constructor(storage: Storage, config: Config) {
    this.#storage = storage;
    this.#config = config;
  }

  get name(): string {
    return this.#config.authString('authentication_db', '_users');
  }

  /**
   * CouchDB's `is_users_db`: the configured `authentication_db`, and every database whose last
   * `/`-separated segment is `_users` or `[couchdb] users_db_suffix` (`_users`, `acme/_users`; not
   * `acme_users`). They all get the hashing, validation and read rules of a users database.
   */
  isUsersDb(db: string): boolean {
    if (db === this.name) return true;
    const last = db.slice(db.lastIndexOf('/') + 1);
    const suffix = this.#config.getString('couchdb', 'users_db_suffix', '_users');
    return last === '_users' || (suffix !== '' && last === suffix);
  }

  /**
   * The documents of `db` as `userCtx` may see them (CouchDB's `after_doc_read`): in a users
   * database, everything for its admins and a document's owner, otherwise the public fields only
   * (auth/user-documents.ts `filterUserRead`); in any other database, as stored.
   */
  readerFor(db: string, userCtx: UserCtx, security: SecurityObject): DocumentReader {
    if (!this.isUsersDb(db)) return AS_STORED;
    const reader = { userCtx, isAdmin: isDbAdmin(userCtx, security) };
    const publicFields = this.publicFields();
    return {
      single: (doc) => filterUserRead(doc, reader, publicFields),
      listed: (doc) => listedUserDoc(doc, reader, publicFields),
    };
  }

  hashSettings(): HashSettings {
    return {
      scheme: this.#config.authString('password_scheme', 'pbkdf2'),
      prf: this.#config.authString('pbkdf2_prf', 'sha256'),
      iterations: this.#config.authInteger('iterations', 600000),
      passwordRegexp: this.#config.authString('password_regexp', ''),
      maxIterations: iterationLimits(this.#config).max,
    };
  }

  publicFields(): string[] {
    return this.#config
      .authString('public_fields', '')
      .split(',')
      .map((field) => field.trim())
      .filter(Boolean);
  }

  /** The current winning revision as JSON, undefined when missing or deleted. */
  async current(db: string, id: string): Promise<JsonObject | undefined> {
    const stored = await this.#storage.readDocument(db, id);
    return stored && !stored.deleted ? renderRevision(stored) : undefined;
  }

  /**
   * Runs CouchDB's before_doc_update and validate_doc_update on a full incoming document, against
   * `previous` when given (an earlier edit of the same id in the same batch), else the stored one.
   */
  async prepare(db: string, doc: JsonObject, writer: WriterContext, previous?: JsonObject): Promise<JsonObject> {
    const id = typeof doc['_id'] === 'string' ? validateDocumentId(doc['_id']) : '';
    return prepareUserWrite(doc, previous ?? (await this.current(db, id)), writer, this.hashSettings());
  }
}
