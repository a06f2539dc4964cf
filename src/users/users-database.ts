import type { Config } from '../config/config.js';
import { renderRevision } from '../documents/document-json.js';
import type { JsonObject, Storage } from '../storage/storage.js';
import { iterationLimits } from './hash-cost.js';
import { prepareUserWrite, type HashSettings, type WriterContext } from './user-documents.js';

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

  /** CouchDB gives the users-db rules to the configured database and to any `…/_users`. */
  isUsersDb(db: string): boolean {
    return db === this.name || db === '_users' || db.endsWith('/_users');
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

  /** Runs CouchDB's before_doc_update and validate_doc_update on a full incoming document. */
  async prepare(db: string, doc: JsonObject, writer: WriterContext): Promise<JsonObject> {
    const id = typeof doc['_id'] === 'string' ? doc['_id'] : '';
    return prepareUserWrite(doc, await this.current(db, id), writer, this.hashSettings());
  }
}
