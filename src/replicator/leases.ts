/**
 * Which node runs the job of a `_replicator` document when several nodes share one PostgreSQL
 * store: a lease per document, kept as the `_local/lease-{docid}` document of `_replicator` and
 * taken or renewed by compare-and-swap on its revision, so exactly one node holds it. The holder
 * renews it every third of `LEASE_MS`; another node takes it over once it has expired (the holder
 * stopped or lost the store). With SQLite, the one node always wins.
 */
import { randomBytes } from 'node:crypto';
import type { Databases } from '../databases/databases.js';

export const LEASE_MS = 30000;

interface LeaseHolder {
  node: string;
  instance: string;
}

export class Leases {
  readonly #databases: Databases;
  readonly #db: string;
  readonly me: LeaseHolder;
  readonly #revs = new Map<string, string>();

  constructor(databases: Databases, db: string, node: string) {
    this.#databases = databases;
    this.#db = db;
    this.me = { node, instance: randomBytes(8).toString('hex') };
  }

  #id(docId: string): string {
    return `_local/lease-${docId}`;
  }

  /** Takes or renews the lease of `docId`; answers the holder when another node holds it. */
  async claim(docId: string, now = Date.now()): Promise<LeaseHolder | undefined> {
    const opened = await this.#databases.openAsServer(this.#db);
    const id = this.#id(docId);
    const current = await opened.getLocal(id);
    const body = current?.body;
    const held = body !== undefined && typeof body['expires'] === 'number' && body['expires'] > now;
    if (held && body['instance'] !== this.me.instance) return { node: String(body['node']), instance: String(body['instance']) };
    const written = await opened.writeLocal(id, { ...this.me, expires: now + LEASE_MS }, current?.rev, false);
    if (!written.ok) {
      const winner = (await opened.getLocal(id))?.body;
      return { node: String(winner?.['node'] ?? ''), instance: String(winner?.['instance'] ?? '') };
    }
    this.#revs.set(docId, written.rev);
    return undefined;
  }

  /** Gives the lease up (a stopped job, a deleted document, shutdown) so another node may take it at once. */
  async release(docId: string): Promise<void> {
    const rev = this.#revs.get(docId);
    if (rev === undefined) return;
    this.#revs.delete(docId);
    const opened = await this.#databases.openAsServer(this.#db);
    await opened.writeLocal(this.#id(docId), {}, rev, true);
  }

  held(): string[] {
    return [...this.#revs.keys()];
  }
}
