import { badRequest } from '../errors/catalog.js';
import { rewriteConfigFile } from './config-file.js';
import { type BooleanKey, type IntegerKey, type Section, type StringKey } from './defaults.js';
import { builtIn, byCodeUnit, sortedRecord, toBoolean, toInteger } from './values.js';
import { type IniSections, isRepresentable, isRepresentableSection, setIniValue } from './ini.js';
import { changedKeys, Memo, merge, readLayers, type Layers } from './config-layers.js';

/**
 * The live configuration: the package defaults, each `--config` file, then the writable layer,
 * later layers winning. Reads hit merged maps rebuilt only on change, because they run on every
 * request; writes go to the writable file only, atomically and one at a time.
 */

export interface ConfigChange {
  section: string;
  key: string;
  /** The effective value after the change (a lower layer's value after a delete). */
  value: string | undefined;
  previous: string | undefined;
  /** The writable layer's value after the change (undefined: the key left that layer). */
  written: string | undefined;
  /** Applied from another worker process (`applyRemote`), which has written the file already. */
  remote: boolean;
}

interface ConfigOptions {
  defaultsFile: string;
  files: readonly string[];
  writableFile: string;
  /** Values of this run shown over the defaults file (`[couchdb] database_dir`); any file overrides them. */
  runtime?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * `persist: false` (CouchDB's `X-Couch-Persist: false`) changes the running server only: the
 * writable layer in memory moves, its file does not, and a restart forgets the change.
 */
interface WriteOptions {
  persist?: boolean;
}

type Listener = (change: ConfigChange) => void;

// Before 3.4 CouchDB called [chttpd_auth] [couch_httpd_auth]; old local.ini files still use it.
const AUTH = 'chttpd_auth';
const LEGACY_AUTH = 'couch_httpd_auth';

export class Config {
  readonly writableFile: string;
  readonly #options: ConfigOptions;
  #defaults: IniSections;
  #files: readonly IniSections[];
  #writable: IniSections;
  #user: IniSections = new Map();
  #effective: IniSections = new Map();
  /**
   * Typed reads and section records by kind, section and key, dropped on every change: requests
   * read the same few settings. `[chttpd_auth]` has maps of its own, so its reads take one lookup.
   */
  #memo = new Memo();
  #listeners: Listener[] = [];
  #writes: Promise<unknown> = Promise.resolve();

  private constructor(options: ConfigOptions, layers: Layers) {
    this.writableFile = options.writableFile;
    this.#options = options;
    this.#defaults = layers.defaults;
    this.#files = layers.files;
    this.#writable = layers.writable;
    this.#rebuild();
  }

  static async load(options: ConfigOptions): Promise<Config> {
    return new Config(options, await readLayers(options));
  }

  /**
   * CouchDB's `POST /_node/{node}/_config/_reload`: every file read again, so a value changed with
   * `X-Couch-Persist: false` is forgotten. Each key whose value moved is announced, as a write is.
   */
  async reload(): Promise<void> {
    return this.#serialised(async () => {
      const fresh = await readLayers(this.#options);
      const before = this.#effective;
      this.#defaults = fresh.defaults;
      this.#files = fresh.files;
      this.#writable = fresh.writable;
      this.#rebuild();
      for (const [section, key] of changedKeys(before, this.#effective)) this.#announce(section, key, before.get(section)?.get(key), false);
    });
  }

  get(section: string, key: string): string | undefined {
    return this.#effective.get(section)?.get(key);
  }

  /** `[chttpd_auth]`, falling back to `[couch_httpd_auth]`, with user layers before the defaults. */
  getAuth(key: string): string | undefined {
    return (
      this.#user.get(AUTH)?.get(key) ??
      this.#user.get(LEGACY_AUTH)?.get(key) ??
      this.#defaults.get(AUTH)?.get(key) ??
      this.#defaults.get(LEGACY_AUTH)?.get(key)
    );
  }

  /** A setting of the defaults table (its built-in default when no layer sets it), or any other with an explicit fallback. */
  getString<S extends Section>(section: S, key: StringKey<S>): string;
  getString(section: string, key: string, fallback: string): string;
  getString(section: string, key: string, fallback?: string): string {
    const value = this.get(section, key);
    if (value !== undefined) return value;
    return fallback ?? String(builtIn(section, key));
  }

  getBoolean<S extends Section>(section: S, key: BooleanKey<S>): boolean;
  getBoolean(section: string, key: string, fallback: boolean): boolean;
  getBoolean(section: string, key: string, fallback?: boolean): boolean {
    if (fallback !== undefined) return toBoolean(this.get(section, key), fallback);
    const slot = this.#memo.slot(this.#memo.booleans, section);
    let value = slot.get(key) as boolean | undefined;
    if (value === undefined) slot.set(key, (value = toBoolean(this.get(section, key), builtIn(section, key) as boolean)));
    return value;
  }

  getInteger<S extends Section>(section: S, key: IntegerKey<S>): number;
  getInteger(section: string, key: string, fallback: number): number;
  getInteger(section: string, key: string, fallback?: number): number {
    if (fallback !== undefined) return toInteger(this.get(section, key), fallback);
    const slot = this.#memo.slot(this.#memo.integers, section);
    let value = slot.get(key) as number | undefined;
    if (value === undefined) slot.set(key, (value = toInteger(this.get(section, key), builtIn(section, key) as number)));
    return value;
  }

  authString(key: StringKey<'chttpd_auth'>): string;
  authString(key: string, fallback: string): string;
  authString(key: string, fallback?: string): string {
    if (fallback !== undefined) return this.getAuth(key) ?? fallback;
    const slot = this.#memo.authStrings;
    let value = slot.get(key) as string | undefined;
    if (value === undefined) slot.set(key, (value = this.getAuth(key) ?? String(builtIn(AUTH, key))));
    return value;
  }

  authBoolean(key: BooleanKey<'chttpd_auth'>): boolean;
  authBoolean(key: string, fallback: boolean): boolean;
  authBoolean(key: string, fallback?: boolean): boolean {
    if (fallback !== undefined) return toBoolean(this.getAuth(key), fallback);
    const slot = this.#memo.authBooleans;
    let value = slot.get(key) as boolean | undefined;
    if (value === undefined) slot.set(key, (value = toBoolean(this.getAuth(key), builtIn(AUTH, key) as boolean)));
    return value;
  }

  authInteger(key: IntegerKey<'chttpd_auth'>): number;
  authInteger(key: string, fallback: number): number;
  authInteger(key: string, fallback?: number): number {
    if (fallback !== undefined) return toInteger(this.getAuth(key), fallback);
    const slot = this.#memo.authIntegers;
    let value = slot.get(key) as number | undefined;
    if (value === undefined) slot.set(key, (value = toInteger(this.getAuth(key), builtIn(AUTH, key) as number)));
    return value;
  }

  /** The section's keys in code-unit order; frozen, because one record is shared until the next change. */
  section(name: string): Readonly<Record<string, string>> {
    const keys = this.#effective.get(name);
    // Only sections that exist are remembered: the name can come from a request.
    if (keys === undefined) return EMPTY_SECTION;
    let record = this.#memo.sections.get(name);
    if (record === undefined) this.#memo.sections.set(name, (record = Object.freeze(sortedRecord(keys))));
    return record;
  }

  all(): Record<string, Record<string, string>> {
    const names = [...this.#effective.keys()].sort(byCodeUnit);
    // fromEntries, not assignment, so a section or key named "__proto__" stays an ordinary key.
    return Object.fromEntries(names.map((name) => [name, sortedRecord(this.#effective.get(name))]));
  }

  /** Persists `[section] key = value` to the writable file; resolves to the previous effective value. */
  async set(section: string, key: string, value: string, options: WriteOptions = {}): Promise<string | undefined> {
    if (!isRepresentableSection(section)) throw badRequest('Invalid configuration section');
    // '_' is a value that fits any line, so a refusal here is about the key alone.
    if (!isRepresentable(key, '_')) throw badRequest('Invalid configuration key');
    if (!isRepresentable(key, value)) throw badRequest('Invalid configuration value');
    return this.#serialised(async () => {
      const previous = this.get(section, key);
      if (options.persist !== false) await rewriteConfigFile(this.writableFile, (text) => setIniValue(text, section, key, value));
      let keys = this.#writable.get(section);
      if (keys === undefined) this.#writable.set(section, (keys = new Map()));
      keys.set(key, value);
      this.#changed(section, key, previous, false);
      return previous;
    });
  }

  /**
   * Another worker process of this server changed its writable layer (and the file, unless
   * `X-Couch-Persist: false`): mirror it here in memory, at once. `value` undefined: deleted.
   */
  applyRemote(section: string, key: string, value: string | undefined): void {
    const previous = this.get(section, key);
    let keys = this.#writable.get(section);
    if (value !== undefined) {
      if (keys === undefined) this.#writable.set(section, (keys = new Map()));
      keys.set(key, value);
    } else {
      if (keys === undefined || !keys.has(key)) return;
      keys.delete(key);
      if (keys.size === 0) this.#writable.delete(section);
    }
    this.#changed(section, key, previous, true);
  }

  /**
   * Removes the key from the writable file, so the effective value falls back to the lower layers.
   * A key that only a lower layer sets is left alone (no write, no event). Resolves to the
   * effective value before the call.
   */
  async delete(section: string, key: string, options: WriteOptions = {}): Promise<string | undefined> {
    return this.#serialised(async () => {
      const previous = this.get(section, key);
      const keys = this.#writable.get(section);
      if (keys === undefined || !keys.has(key)) return previous;
      if (options.persist !== false) await rewriteConfigFile(this.writableFile, (text) => setIniValue(text, section, key, undefined));
      keys.delete(key);
      if (keys.size === 0) this.#writable.delete(section);
      this.#changed(section, key, previous, false);
      return previous;
    });
  }

  onChange(listener: (change: ConfigChange) => void): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((candidate) => candidate !== listener);
    };
  }

  #serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#writes.then(task);
    this.#writes = run.catch(() => undefined);
    return run;
  }

  #changed(section: string, key: string, previous: string | undefined, remote: boolean): void {
    this.#rebuild();
    this.#announce(section, key, previous, remote);
  }

  #announce(section: string, key: string, previous: string | undefined, remote: boolean): void {
    const written = this.#writable.get(section)?.get(key);
    const change: ConfigChange = Object.freeze({ section, key, value: this.get(section, key), previous, written, remote });
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        // Values may be secrets (admin hashes, the cookie secret), so only the location is logged.
        console.error(`config: a change listener failed for [${section}] ${key}:`, error);
      }
    }
  }

  #rebuild(): void {
    this.#user = merge([...this.#files, this.#writable]);
    this.#effective = merge([this.#defaults, this.#user]);
    this.#memo = new Memo();
  }
}

const EMPTY_SECTION: Readonly<Record<string, string>> = Object.freeze({});
