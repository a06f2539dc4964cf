// Minimal typings for pouchdb-find 9.0.0 (the Mango plugin), covering only what the client tests call.
declare module 'pouchdb-find' {
  import type { Plugin } from 'pouchdb-core';
  const plugin: Plugin;
  export default plugin;
}

declare module 'pouchdb-core' {
  export interface FindRequest {
    selector: object;
    fields?: string[];
    sort?: (string | Record<string, 'asc' | 'desc'>)[];
    limit?: number;
    skip?: number;
    use_index?: string | [string, string];
    bookmark?: string;
    execution_stats?: boolean;
  }

  export interface FindResponse<Content extends object> {
    docs: (Content & { _id: string; _rev?: string })[];
    warning?: string;
    bookmark?: string;
    execution_stats?: Record<string, number>;
  }

  export interface IndexDefinition {
    index: { fields: (string | Record<string, 'asc' | 'desc'>)[]; partial_filter_selector?: object };
    name?: string;
    ddoc?: string;
    type?: string;
  }

  export interface IndexInfo {
    ddoc: string | null;
    name: string;
    type: string;
    def: { fields: Record<string, string>[] };
  }

  export interface Database<Content extends object = object> {
    createIndex(index: IndexDefinition): Promise<{ result: string; id: string; name: string }>;
    getIndexes(): Promise<{ total_rows: number; indexes: IndexInfo[] }>;
    deleteIndex(index: { ddoc: string; name: string; type?: string }): Promise<{ ok: boolean }>;
    find(request: FindRequest): Promise<FindResponse<Content>>;
    explain(request: FindRequest): Promise<{ index: IndexInfo; selector: object }>;
  }
}
