/**
 * One end of a replication, spoken to over HTTP with CouchDB's replication protocol (the calls of
 * couch_replicator_api_wrap): database info and creation, `_changes`, `_revs_diff`, `_bulk_get`
 * (or `open_revs` per document where a server has no `_bulk_get`), `_bulk_docs` with
 * `new_edits:false`, and the `_local` checkpoint documents.
 */
import type { Json, JsonObject } from '../json/json.js';
import type { ChangesFilter } from './options.js';
import { RemoteClient, errorOf, type ClientSettings } from './http-client.js';
import { shownUrl, type Endpoint } from './endpoint.js';
import { isTooLarge } from './bounded-read.js';
import { RemoteError, ReplicationSpecError } from './replication-errors.js';

export interface ChangeEntry {
  seq: Json;
  id: string;
  changes: { rev: string }[];
  deleted?: boolean;
}

interface ChangesPage {
  results: ChangeEntry[];
  lastSeq: Json;
}

const asObject = (value: Json | undefined): JsonObject => (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {});

export class RemoteDb {
  readonly client: RemoteClient;
  #bulkGet = true;

  constructor(endpoint: Endpoint, settings: ClientSettings, signal?: AbortSignal) {
    this.client = new RemoteClient(endpoint, settings, signal);
  }

  get url(): string {
    return shownUrl(this.client.endpoint);
  }

  close(): void {
    this.client.close();
  }

  /**
   * The database's info; creates it first with `create` (and `create_target_params` as query).
   * 401/403 and 404 become the errors `_replicate` answers (couch_replicator_api_wrap `db_open`).
   */
  async open(create = false, params: JsonObject = {}): Promise<JsonObject> {
    try {
      if (create) {
        const query = Object.fromEntries(Object.entries(params).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]));
        const created = await this.client.request('PUT', '', { query });
        if (created.status >= 400 && created.status !== 412) throw errorOf(created);
      }
      return asObject(await this.client.json('GET', ''));
    } catch (error) {
      if (!(error instanceof RemoteError)) throw error;
      if (error.status === 401 || error.status === 403) {
        throw new ReplicationSpecError(401, 'unauthorized', `unauthorized to access or create database ${this.url}`);
      }
      if (error.status === 404) throw new ReplicationSpecError(404, 'db_not_found', `could not open ${this.url}`);
      throw error;
    }
  }

  /** One page of changes after `since`; `longpoll` waits up to `timeoutMs` for the first one. */
  async changes(since: Json, limit: number, filter: ChangesFilter, wait?: { timeoutMs: number }): Promise<ChangesPage> {
    const query: Record<string, string> = { style: 'all_docs', since: typeof since === 'string' ? since : JSON.stringify(since), limit: String(limit) };
    let body: JsonObject | undefined;
    if (wait) Object.assign(query, { feed: 'longpoll', timeout: String(wait.timeoutMs), heartbeat: String(Math.max(1000, Math.floor(wait.timeoutMs / 3))) });
    if (filter.kind === 'doc_ids') (query['filter'] = '_doc_ids'), (body = { doc_ids: filter.ids });
    if (filter.kind === 'selector') (query['filter'] = '_selector'), (body = { selector: filter.selector });
    if (filter.kind === 'view' || filter.kind === 'user') {
      query['filter'] = filter.kind === 'view' ? filter.name : `${filter.ddoc}/${filter.name}`;
      for (const [name, value] of Object.entries(filter.queryParams)) query[name] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    const timeoutMs = wait ? wait.timeoutMs + 30000 : undefined;
    const answer = asObject(await this.client.json(body ? 'POST' : 'GET', '_changes', { query, ...(body ? { body } : {}), ...(timeoutMs ? { timeoutMs } : {}) }));
    const results = Array.isArray(answer['results']) ? (answer['results'] as unknown as ChangeEntry[]) : [];
    return { results, lastSeq: answer['last_seq'] ?? since };
  }

  async revsDiff(revs: Record<string, string[]>): Promise<Record<string, { missing: string[]; possible_ancestors?: string[] }>> {
    return (await this.client.json('POST', '_revs_diff', { body: revs })) as never;
  }

  /**
   * The asked revisions with their history (`revs=true`), attachments as stubs, one entry per asked
   * revision (`undefined` where the source had an error for it); undefined when the source has no
   * `_bulk_get` (CouchDB before 2.3 and some other servers), which is then not asked again.
   */
  async bulkGet(wanted: { id: string; rev: string; atts_since?: string[] }[]): Promise<(JsonObject[] | undefined)[] | undefined> {
    if (!this.#bulkGet) return undefined;
    let response;
    try {
      response = await this.client.request('POST', '_bulk_get', { query: { revs: 'true', latest: 'true' }, body: { docs: wanted.map(({ id, rev }) => ({ id, rev })) } });
    } catch (error) {
      // A batch too large to hold whole: its documents are read one at a time (open_revs), each bounded on its own.
      if (isTooLarge(error)) return undefined;
      throw error;
    }
    if (response.status >= 400) {
      if (![400, 404, 405, 501].includes(response.status)) throw errorOf(response);
      this.#bulkGet = false;
      return undefined;
    }
    const results = asObject(JSON.parse(response.body.toString('utf8')) as Json)['results'];
    const rows = Array.isArray(results) ? results : [];
    return wanted.map((_, i) => {
      const docs = asObject(rows[i])['docs'];
      const items = (Array.isArray(docs) ? docs : []).map((item) => asObject(item)['ok']);
      return items.length > 0 && items.every((ok) => ok !== undefined) ? items.map(asObject) : undefined;
    });
  }

  /** `_bulk_docs` with `new_edits:false`: the rows of the documents the target refused. */
  async write(docs: JsonObject[]): Promise<JsonObject[]> {
    const rows = await this.client.json('POST', '_bulk_docs', { body: { docs, new_edits: false } });
    return (Array.isArray(rows) ? rows : []).map(asObject).filter((row) => typeof row['error'] === 'string');
  }

  async getLocal(id: string): Promise<JsonObject | undefined> {
    const response = await this.client.request('GET', `_local/${encodeURIComponent(id)}`);
    if (response.status === 404) return undefined;
    if (response.status >= 400) throw errorOf(response);
    return asObject(JSON.parse(response.body.toString('utf8')) as Json);
  }

  /** Writes a checkpoint document; answers its new revision. */
  async putLocal(id: string, body: JsonObject): Promise<string> {
    const answer = asObject(await this.client.json('PUT', `_local/${encodeURIComponent(id)}`, { body }));
    return String(answer['rev'] ?? '');
  }

  /** The source of a filter function, for the replication id (couch_replicator_filters `fetch`). */
  async filterCode(ddoc: string, name: string): Promise<string> {
    const doc = asObject(await this.client.json('GET', `_design/${encodeURIComponent(ddoc)}`));
    const code = asObject(doc['filters'])[name];
    if (typeof code !== 'string') throw new ReplicationSpecError(404, 'not_found', `Couldn't find filter \`${name}\` in design document _design/${ddoc}`);
    return code;
  }
}
