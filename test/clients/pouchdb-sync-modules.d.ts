// Typings for the PouchDB 9 replication tests, merged into the minimal ones of pouchdb-modules.d.ts:
// pouchdb-adapter-memory, pouchdb-replication (replicate, sync), and the calls those tests make.

declare module 'pouchdb-core' {
  /** What PouchDB's http adapter passes to `fetch` (a node-fetch Headers object, a JSON string body). */
  export interface PouchFetchInit {
    method?: string;
    headers: { entries(): IterableIterator<[string, string]> };
    body?: string;
    signal?: AbortSignal;
  }

  export interface DatabaseOptions {
    /** `memory` for a local database. */
    adapter?: string;
    /** Replaces PouchDB's fetch (cookie jar, extra headers) for this database. */
    fetch?: (url: string, init: PouchFetchInit) => Promise<globalThis.Response>;
  }

  export interface ReplicateOptions {
    live?: boolean;
    retry?: boolean;
    batch_size?: number;
    batches_limit?: number;
    /** Backoff between retries of a live replication, in ms. */
    back_off_function?: (delay: number) => number;
    heartbeat?: number | false;
    timeout?: number;
    /** A design document's filter function (`ddoc/name`), run by the source server. */
    filter?: string;
    /** The filter's `req.query`. */
    query_params?: Record<string, string>;
  }

  export interface ReplicationResult {
    ok: boolean;
    docs_read: number;
    docs_written: number;
    doc_write_failures: number;
    errors: unknown[];
    last_seq: number | string;
    status: string;
  }

  export interface SyncResult {
    push: ReplicationResult;
    pull: ReplicationResult;
  }

  /** A running replication: a promise of its result and an event emitter. */
  export interface Replication<Result> extends Promise<Result> {
    cancel(): void;
    on(event: 'change' | 'paused' | 'active' | 'denied' | 'complete' | 'error', listener: (info: any) => void): this;
  }

  export interface GetOptions {
    conflicts?: boolean;
    revs?: boolean;
    open_revs?: 'all' | string[];
  }

  export interface Database<Content extends object = object> {
    get(id: string, options: GetOptions): Promise<ExistingDocument<Content> & { _conflicts?: string[] }>;
    replicate: {
      to(target: Database<object> | string, options?: ReplicateOptions): Replication<ReplicationResult>;
      from(source: Database<object> | string, options?: ReplicateOptions): Replication<ReplicationResult>;
    };
    sync(other: Database<object> | string, options?: ReplicateOptions): Replication<SyncResult>;
    destroy(): Promise<unknown>;
    close(): Promise<unknown>;
  }
}

declare module 'pouchdb-adapter-memory' {
  import type { Plugin } from 'pouchdb-core';
  const plugin: Plugin;
  export default plugin;
}

declare module 'pouchdb-replication' {
  import type { Plugin } from 'pouchdb-core';
  const plugin: Plugin;
  export default plugin;
}
