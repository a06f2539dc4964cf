// Minimal typings for PouchDB 9 (pouchdb-core, pouchdb-adapter-http) and pouchdb-authentication 1.1.3,
// covering only what the client tests call. Not @types/pouchdb-core: it adds `lib="dom"` and a
// global `interface Buffer` to the whole program, which breaks the type-checking of src/.

declare module 'pouchdb-core' {
  export interface Credentials {
    username: string;
    password: string;
  }

  export interface DatabaseOptions {
    /** Basic credentials sent on every request. */
    auth?: Credentials;
    /** Do not GET (and on 404 PUT) the database when the instance is first used. */
    skip_setup?: boolean;
  }

  export interface Response {
    ok: boolean;
    id: string;
    rev: string;
  }

  /** A rejected call, or a failed row of bulkDocs / allDocs({keys}). */
  export interface PouchError {
    status?: number;
    name?: string;
    error?: string | boolean;
    message?: string;
    reason?: string;
  }

  export type Document<Content extends object> = Content & { _id: string; _rev?: string; _deleted?: boolean };
  export type ExistingDocument<Content extends object> = Content & { _id: string; _rev: string };

  export interface AllDocsOptions {
    include_docs?: boolean;
    keys?: string[];
    startkey?: string;
    endkey?: string;
    limit?: number;
    descending?: boolean;
  }

  export interface AllDocsRow<Content extends object> {
    id: string;
    key: string;
    value: { rev: string; deleted?: boolean };
    doc?: ExistingDocument<Content>;
    error?: string;
  }

  export interface AllDocsResponse<Content extends object> {
    total_rows: number;
    offset: number;
    rows: Array<AllDocsRow<Content>>;
  }

  export interface DatabaseInfo {
    db_name: string;
    doc_count: number;
    update_seq: number | string;
    [key: string]: unknown;
  }

  export interface UserContext {
    name: string | null;
    roles: string[];
  }

  export interface SessionResponse {
    ok: boolean;
    userCtx: UserContext;
    info: { authenticated?: string; authentication_db?: string; authentication_handlers: string[] };
  }

  export interface LoginResponse {
    ok: boolean;
    name: string;
    roles: string[];
  }

  export interface UserDocument {
    _id: string;
    _rev: string;
    name: string;
    roles: string[];
    type: string;
    [key: string]: unknown;
  }

  export interface Database<Content extends object = object> {
    readonly name: string;
    put(doc: Document<Content>): Promise<Response>;
    get(id: string): Promise<ExistingDocument<Content>>;
    remove(doc: ExistingDocument<Content>): Promise<Response>;
    bulkDocs(docs: Array<Document<Content>>): Promise<Array<Response | PouchError>>;
    allDocs(options?: AllDocsOptions): Promise<AllDocsResponse<Content>>;
    info(): Promise<DatabaseInfo>;

    // pouchdb-authentication
    logIn(username: string, password: string): Promise<LoginResponse>;
    logOut(): Promise<{ ok: boolean }>;
    getSession(): Promise<SessionResponse>;
    signUp(username: string, password: string, options?: { roles?: string[]; metadata?: Record<string, unknown> }): Promise<Response>;
    getUser(username: string): Promise<UserDocument>;
    changePassword(username: string, password: string): Promise<Response>;
  }

  export type Plugin = Record<string, unknown> | ((pouch: PouchDBStatic) => void);

  export interface PouchDBStatic {
    new <Content extends object = object>(name: string, options?: DatabaseOptions): Database<Content>;
    plugin(plugin: Plugin): PouchDBStatic;
  }

  const PouchDB: PouchDBStatic;
  export default PouchDB;
}

declare module 'pouchdb-adapter-http' {
  import type { Plugin } from 'pouchdb-core';
  const plugin: Plugin;
  export default plugin;
}
