/**
 * Every Storage backend the contract suite (test/storage/) runs against. `STORAGE_BACKENDS`
 * (comma list, e.g. `sqlite,postgres`) narrows the set; by default every available one runs.
 */
import { afterEach, beforeEach } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import type { Storage } from '../../src/storage/storage.js';

export interface OpenedBackend {
  storage: Storage;
  /** Closes the storage and opens the same data again (then `storage` is the new one). */
  reopen(): Promise<Storage>;
  /** Closes whatever is open and removes the data. */
  cleanup(): Promise<void>;
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

const AVAILABLE: BackendFactory[] = [sqlite];

function selected(): BackendFactory[] {
  const wanted = process.env.STORAGE_BACKENDS?.trim();
  if (wanted === undefined || wanted === '') return AVAILABLE;
  const names = wanted.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !AVAILABLE.some((b) => b.name === n));
  if (unknown.length > 0) throw new Error(`STORAGE_BACKENDS: unknown backend(s) ${unknown.join(', ')}`);
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
