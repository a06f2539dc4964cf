// Typings for the PouchDB 9 view tests, merged into the minimal ones of pouchdb-modules.d.ts:
// pouchdb-mapreduce 9.0.0 and `query()`.

declare module 'pouchdb-core' {
  export interface QueryOptions {
    key?: unknown;
    keys?: unknown[];
    startkey?: unknown;
    endkey?: unknown;
    startkey_docid?: string;
    endkey_docid?: string;
    inclusive_end?: boolean;
    descending?: boolean;
    limit?: number;
    skip?: number;
    reduce?: boolean;
    group?: boolean;
    group_level?: number;
    include_docs?: boolean;
    update_seq?: boolean;
    stale?: 'ok' | 'update_after';
  }

  export interface QueryRow {
    id?: string;
    key: unknown;
    value: unknown;
    doc?: { _id: string; [field: string]: unknown } | null;
  }

  export interface QueryResponse {
    total_rows?: number;
    offset?: number;
    update_seq?: unknown;
    rows: QueryRow[];
  }

  export interface Database<Content extends object = object> {
    query(view: string, options?: QueryOptions): Promise<QueryResponse>;
    viewCleanup(): Promise<{ ok: boolean }>;
  }
}

declare module 'pouchdb-mapreduce' {
  import type { Plugin } from 'pouchdb-core';
  const plugin: Plugin;
  export default plugin;
}
