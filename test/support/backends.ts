/**
 * Every Storage backend the contract suite (test/storage/) runs against. `STORAGE_BACKENDS`
 * (comma list, e.g. `sqlite,postgres`) narrows the set; by default every available one runs.
 *
 * PostgreSQL is available when `DIVAN_TEST_POSTGRES_URL` is set, or when a server answers at
 * `postgresql://postgres@127.0.0.1:5432/test` (probed once per process). Each opened backend gets its
 * own schema, dropped by `cleanup()`. Naming `postgres` in `STORAGE_BACKENDS`, or setting
 * `DIVAN_TEST_POSTGRES_URL`, while no server answers fails loudly rather than skipping it.
 */
import { afterEach, beforeEach } from 'node:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { reasonOf, redactUrl } from '../../src/log/redaction.js';
import { openPostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import { openSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../../src/storage/storage.js';

export interface OpenedBackend {
  storage: Storage;
  /** Closes the storage and opens the same data again (then `storage` is the new one). */
  reopen(): Promise<Storage>;
  /** Closes whatever is open and removes the data. */
  cleanup(): Promise<void>;
  /** The SQLite backend's database file. */
  readonly file?: string;
}

export interface BackendFactory {
  name: string;
  open(): Promise<OpenedBackend>;
}

const sqlite: BackendFactory = {
  name: 'sqlite',
  async open() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-'));
    const file = path.join(dir, 'divan.sqlite');
    let current: Storage = openSqliteStorage(file);
    return {
      file,
      get storage() {
        return current;
      },
      async reopen() {
        await current.close();
        current = openSqliteStorage(file);
        return current;
      },
      async cleanup() {
        await current.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const DEFAULT_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';

/**
 * Runs `work` on a single short-lived connection (schema administration of the tests). A refused
 * connection fails at once; the generous timeout only covers a loaded machine, where a test file
 * that takes seconds to import must not see a live server as unreachable.
 */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL of the test server, or why there is none (probed once, quickly). */
async function probePostgres(): Promise<{ url: string } | { reason: string }> {
  const explicit = process.env.DIVAN_TEST_POSTGRES_URL?.trim();
  const url = explicit !== undefined && explicit !== '' ? explicit : DEFAULT_POSTGRES_URL;
  try {
    await withClient(url, (client) => client.query('SELECT 1'));
    return { url };
  } catch (error) {
    return { reason: `no PostgreSQL server at ${redactUrl(url)}: ${reasonOf(error, url)}` };
  }
}

const postgresProbe = await probePostgres();

/** URL of the PostgreSQL server the tests use; undefined when none answered. */
export const POSTGRES_TEST_URL: string | undefined = 'url' in postgresProbe ? postgresProbe.url : undefined;
/** Why PostgreSQL tests are skipped (undefined when they run). */
export const POSTGRES_SKIP_REASON: string | undefined = 'reason' in postgresProbe ? postgresProbe.reason : undefined;

/** A fresh, unique schema name (`divan_test_<hex>`); the storage creates it when it opens. */
export function uniqueSchema(): string {
  return `divan_test_${randomBytes(6).toString('hex')}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema.replace(/"/g, '""')}" CASCADE`));
}

function postgresFactory(url: string): BackendFactory {
  return {
    name: 'postgres',
    async open() {
      const schema = uniqueSchema();
      let current: Storage = await openPostgresStorage({ url, schema, poolSize: 4 });
      return {
        get storage() {
          return current;
        },
        async reopen() {
          await current.close();
          current = await openPostgresStorage({ url, schema, poolSize: 4 });
          return current;
        },
        async cleanup() {
          await current.close();
          await dropSchema(url, schema);
        },
      };
    },
  };
}

// An explicit URL is a request to test PostgreSQL: it must answer.
if (POSTGRES_TEST_URL === undefined && (process.env.DIVAN_TEST_POSTGRES_URL?.trim() ?? '') !== '') {
  throw new Error(`DIVAN_TEST_POSTGRES_URL is set but unusable (${POSTGRES_SKIP_REASON})`);
}

const AVAILABLE: BackendFactory[] = [sqlite];
if (POSTGRES_TEST_URL !== undefined) AVAILABLE.push(postgresFactory(POSTGRES_TEST_URL));
const KNOWN = ['sqlite', 'postgres'];

function selected(): BackendFactory[] {
  const wanted = process.env.STORAGE_BACKENDS?.trim();
  if (wanted === undefined || wanted === '') return AVAILABLE;
  const names = wanted.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !KNOWN.includes(n));
  if (unknown.length > 0) throw new Error(`STORAGE_BACKENDS: unknown backend(s) ${unknown.join(', ')}`);
  if (names.includes('postgres') && POSTGRES_TEST_URL === undefined) {
    throw new Error(`STORAGE_BACKENDS names postgres but it is unreachable (${POSTGRES_SKIP_REASON})`);
  }
  return AVAILABLE.filter((b) => names.includes(b.name));
}

export const BACKENDS: BackendFactory[] = selected();

/**
 * Gives each test of the enclosing `describe` a fresh, empty backend with one database `db`
 * (open security), cleaned up afterwards. Call the returned function inside a test.
 */
export function freshBackend(backend: BackendFactory): () => OpenedBackend {
  let opened: OpenedBackend | undefined;
  beforeEach(async () => {
    opened = await backend.open();
    await opened.storage.createDatabase('db', OPEN_SECURITY);
  });
  afterEach(async () => {
    await opened?.cleanup();
    opened = undefined;
  });
  return () => {
    if (opened === undefined) throw new Error('freshBackend() used outside a test');
    return opened;
  };
}

export const OPEN_SECURITY = { admins: { names: [], roles: [] }, members: { names: [], roles: [] } };
