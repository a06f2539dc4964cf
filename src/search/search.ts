/**
 * Full-text search of a database (docs/search.md): reads the design document's Nouveau index,
 * brings it up to date (unless `update=false`), parses `q` (Lucene syntax), plans it over the
 * fields' types and answers as Nouveau: `{total_hits, total_hits_relation, hits: [{id, order,
 * fields, doc}], bookmark, counts, ranges, update_latency}`.
 */
import { designPartitioned, partitionRange } from '../databases/partitions.js';
import { isNouveauAnalyzer } from '../design/registry.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { badRequest } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { SearchAnswer, SearchHitRow, SearchPlan, SearchSortKey, SearchStore } from '../storage/storage.js';
import { LuceneSyntaxError, parseLuceneQuery } from './lucene-query.js';
import type { SearchArgs } from './search-args.js';
import { analyzerOf, searchIndexOf, type SearchIndex } from './search-index.js';
import { updateSearchIndex, type IndexFunctionsOf } from './search-indexer.js';
import { planOf } from './search-plan.js';
import { expandTerms } from './term-expansion.js';
import { sortKeysOf } from './search-sort.js';

interface SearchSettings {
  functions: IndexFunctionsOf;
  log: Logger;
  /** The backend's search store, for `analyze`. */
  store: SearchStore;
}

/** A hit's sort values as Nouveau writes them: each with its type. */
function typedOrder(sort: readonly SearchSortKey[], hit: SearchHitRow): JsonObject[] {
  return hit.order.map((value, i) => {
    const by = sort[i]!.by;
    if (value === null) return { '@type': 'null', value: null };
    return { '@type': by === 'score' ? 'float' : by === 'double' ? 'double' : 'string', value };
  });
}

/** Stored values by name: one value as itself, several as a list (nouveau_fabric_search:simplify_fields). */
function fieldsOf(hit: SearchHitRow): JsonObject {
  const fields: Record<string, Json[]> = {};
  for (const { name, value } of hit.fields) (fields[name] ??= []).push(value);
  return Object.fromEntries(Object.entries(fields).map(([name, values]) => [name, values.length === 1 ? values[0]! : values]));
}

const packBookmark = (after: readonly (string | number)[]): string => Buffer.from(JSON.stringify(after)).toString('base64url');

function unpackBookmark(bookmark: string, length: number): (string | number)[] {
  try {
    const after = JSON.parse(Buffer.from(bookmark, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(after) && after.length === length && after.every((value) => typeof value === 'string' || typeof value === 'number')) return after;
  } catch {
    // answered below
  }
  throw badRequest('Invalid bookmark parameter supplied');
}

export class Search {
  readonly #settings: SearchSettings;

  constructor(settings: SearchSettings) {
    this.#settings = settings;
  }

  /** The index `name` of `_design/{ddoc}`: 404 as for the design document, then `{name} not found.`. */
  async index(opened: OpenedDatabase, ddoc: string, name: string): Promise<SearchIndex> {
    const { doc } = await opened.readDocument(`_design/${ddoc}`, undefined, {});
    return searchIndexOf(doc, name, designPartitioned(opened.security, doc));
  }

  /** Brings the index up to date; answers the sequence it reached. */
  refresh(opened: OpenedDatabase, index: SearchIndex): Promise<number> {
    return updateSearchIndex({ storage: opened.storage, functions: this.#settings.functions, log: this.#settings.log }, opened.db, index);
  }

  /** One query; with `partition`, of that partition's documents only. */
  async query(opened: OpenedDatabase, index: SearchIndex, args: SearchArgs, partition?: string): Promise<JsonObject> {
    const { answer, sort, latency } = await this.#search(opened, index, args, partition);
    const docs = args.includeDocs ? await this.#documents(opened, answer.hits.map((hit) => hit.id)) : undefined;
    const last = answer.hits[answer.hits.length - 1];
    return {
      total_hits: answer.totalHits,
      total_hits_relation: 'EQUAL_TO',
      hits: answer.hits.map((hit, i) => ({ id: hit.id, order: typedOrder(sort, hit), fields: fieldsOf(hit), ...(docs === undefined ? {} : { doc: docs[i]! }) })),
      bookmark: last === undefined ? (args.bookmark ?? null) : packBookmark(last.after),
      counts: answer.counts ?? null,
      ranges: answer.ranges ?? null,
      update_latency: latency,
    };
  }

  /**
   * One page of hits with the bookmark that continues after each (Mango's nouveau cursor reads
   * hits one by one and stops anywhere in a page).
   */
  async hits(opened: OpenedDatabase, index: SearchIndex, args: SearchArgs, partition?: string): Promise<{ id: string; bookmark: string }[]> {
    const { answer } = await this.#search(opened, index, args, partition);
    return answer.hits.map((hit) => ({ id: hit.id, bookmark: packBookmark(hit.after) }));
  }

  async #search(opened: OpenedDatabase, index: SearchIndex, args: SearchArgs, partition: string | undefined): Promise<{ answer: SearchAnswer; sort: SearchSortKey[]; latency: number }> {
    // As CouchDB's search of partitioned indexes (dreyfus_httpd's partition checks): a partitioned
    // index answers a partition's queries only, a global one never a partition's.
    if (index.partitioned && partition === undefined) throw badRequest('`partition` parameter is mandatory for queries to this index.');
    if (!index.partitioned && partition !== undefined) throw badRequest('`partition` not supported on this index');
    const started = Date.now();
    if (args.update) await this.refresh(opened, index);
    else await opened.storage.search.open(opened.db, index.signature);
    const latency = Date.now() - started;
    let query;
    try {
      query = parseLuceneQuery(args.q);
    } catch (error) {
      if (error instanceof LuceneSyntaxError) throw badRequest(error.message);
      throw error;
    }
    const store = opened.storage.search;
    const types = await store.fieldTypes(opened.db, index.signature);
    const vocabulary = (field: string, type: 'text' | 'string'): Promise<string[]> => store.vocabulary(opened.db, index.signature, field, type, analyzerOf(index, field));
    query = await expandTerms(query, { types, vocabulary });
    const planned = planOf(query, { types, analyzerOf: (field) => analyzerOf(index, field), syntax: store.textSyntax });
    const range = partition === undefined ? undefined : partitionRange(partition);
    const plan: SearchPlan = range === undefined ? planned : { kind: 'and', parts: [{ kind: 'ids', gte: range.start, lt: range.end }, planned] };
    const sort = sortKeysOf(args.sort, types);
    const answer = await store.search(opened.db, index.signature, {
      plan,
      sort,
      limit: args.limit,
      ...(args.bookmark === undefined ? {} : { after: unpackBookmark(args.bookmark, sort.length) }),
      ...(args.counts === undefined ? {} : { counts: args.counts }),
      ...(args.ranges === undefined ? {} : { ranges: args.ranges }),
      topN: args.topN,
    });
    return { answer, sort, latency };
  }

  /** `GET …/_nouveau_info/{name}`: `{name, search_index: {…}}` as CouchDB's. */
  async info(opened: OpenedDatabase, index: SearchIndex): Promise<JsonObject> {
    const found = (await opened.storage.search.list(opened.db)).find((entry) => entry.signature === index.signature);
    const purgeSeq = (await opened.info())?.purgeSeq ?? 0;
    return {
      name: `${index.ddocId}/${index.name}`,
      search_index: { update_seq: found?.updateSeq ?? 0, purge_seq: found === undefined ? 0 : purgeSeq, num_docs: found?.docs ?? 0, disk_size: 0, signature: index.signature },
    };
  }

  /**
   * `POST /_nouveau_analyze`: the terms of `text` under `analyzer`, as the index makes them
   * (`keyword`: the whole text, as it is indexed as a string field). Errors as CouchDB's
   * (nouveau_api:analyze and Nouveau's AnalyzeResource).
   */
  async analyze(body: JsonObject): Promise<JsonObject> {
    const { analyzer, text } = body;
    if (typeof analyzer !== 'string' || typeof text !== 'string') throw badRequest("'text' and 'analyzer' fields must be non-empty strings");
    const empty = [analyzer === '' ? 'analyzer must not be empty' : '', text === '' ? 'text must not be empty' : ''].filter((problem) => problem !== '');
    if (empty.length > 0) throw badRequest(empty.join(' and '));
    if (!isNouveauAnalyzer(analyzer)) throw badRequest(`${analyzer} is not a valid analyzer name`);
    return { tokens: analyzer === 'keyword' ? [text] : await this.#settings.store.analyze(analyzer, text) };
  }

  /** `_nouveau_cleanup`: drops the indexes no design document of the database defines. */
  async cleanup(opened: OpenedDatabase): Promise<number> {
    const used = new Set<string>();
    const designs = await opened.listDocuments({ startKey: '_design/', endKey: '_design0', includeDocs: true });
    for (const summary of designs.rows) {
      if (summary.body === undefined || summary.deleted) continue;
      const doc = { _id: summary.id, ...summary.body } as JsonObject;
      const indexes = doc['nouveau'];
      if (typeof indexes !== 'object' || indexes === null || Array.isArray(indexes)) continue;
      for (const name of Object.keys(indexes)) {
        try {
          used.add(searchIndexOf(doc, name, designPartitioned(opened.security, doc)).signature);
        } catch {
          // not an index: nothing of it is kept
        }
      }
    }
    const unused = (await opened.storage.search.list(opened.db)).map((index) => index.signature).filter((signature) => !used.has(signature));
    return unused.length === 0 ? 0 : opened.storage.search.drop(opened.db, unused);
  }

  async #documents(opened: OpenedDatabase, ids: readonly string[]): Promise<(JsonObject | null)[]> {
    return Promise.all(
      ids.map(async (id) => {
        try {
          const { doc } = await opened.readDocument(id, undefined, {});
          return doc['_deleted'] === true ? null : doc;
        } catch (error) {
          if (error instanceof Error && 'status' in error && error.status === 404) return null;
          throw error;
        }
      }),
    );
  }
}
