/**
 * `_find` and `_explain` of one opened database: the json indexes are read from the design
 * documents, the planner picks one, a json index catches up with the change sequence (unless
 * `update: false`), the cursor reads one page, and the page is shaped (`_conflicts`, `fields`,
 * bookmark, warnings, `execution_stats`) as CouchDB's `mango_cursor_view` shapes it.
 */
import { performance } from 'node:perf_hooks';
import type { OpenedDatabase } from '../databases/opened-database.js';
import type { JsonObject } from '../json/json.js';
import { runCursor, type Found, type ScanStats } from './cursor.js';
import type { Search } from '../search/search.js';
import { nouveauLimit, nouveauSort, runNouveauCursor } from './nouveau-cursor.js';
import { textIndexableFields, textQuery } from './text-query.js';
import type { FindRequest } from './find-request.js';
import { catalog } from './index-catalog.js';
import { indexJson, type MangoIndex } from './index-definitions.js';
import { updateIndex } from './index-updater.js';
import { plan, type Plan } from './planner.js';
import { isPartitioned, requirePartitioned } from '../databases/partitions.js';
import { isCouchError } from '../errors/couch-error.js';
import { noScopedIndexForSort } from '../errors/mango-errors.js';
import { encodeBookmark, project } from './results.js';
import { conjunctionJson, selectorHints } from './selector-analysis.js';

const NO_INDEX_WARNING = 'No matching index found, create an index to optimize query time.';
const SCAN_WARNING =
  'The number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this.';

function warningsOf(opened: OpenedDatabase, planned: Plan, stats: ScanStats, returned: number): string[] {
  const warnings = [...planned.warnings];
  if (planned.index.type === 'special') warnings.push(NO_INDEX_WARNING);
  const threshold = opened.context.config.getInteger('mango', 'index_scan_warning_threshold');
  const ratio = returned === 0 ? stats.docsExamined : stats.docsExamined / returned;
  if (threshold > 0 && ratio > threshold) warnings.push(SCAN_WARNING);
  return warnings;
}

async function withConflicts(opened: OpenedDatabase, found: readonly Pick<Found, 'doc'>[]): Promise<JsonObject[]> {
  const conflicts = await opened.conflicts(found.map((item) => item.doc['_id'] as string));
  return found.map((item) => {
    const live = conflicts.get(item.doc['_id'] as string);
    return live === undefined ? item.doc : { ...item.doc, _conflicts: live };
  });
}

/** The members whose stored values may order and select this caller's results. */
function queryableMembers(opened: OpenedDatabase): (member: string) => boolean {
  const view = opened.view;
  return (member) => member === '_id' || view.showsAsStored?.(member) === true;
}

/**
 * mango_idx's filter_partition_indexes: a partition query may use partitioned indexes (and the
 * partition's range of `_all_docs`), a global query global ones.
 */
function queryIndexes(opened: OpenedDatabase, request: FindRequest, indexes: readonly MangoIndex[]): readonly MangoIndex[] {
  if (request.partition !== undefined) requirePartitioned(opened);
  // A user of a database with per-document access is served from `_all_docs` over their own rows
  // (`OpenedDatabase.listDocuments`): a json index holds every user's documents, and its key range,
  // order, bookmark and `execution_stats` would tell of theirs.
  if (opened.scope !== undefined) return [];
  return indexes.filter((index) => (index.partitioned === true) === (request.partition !== undefined));
}

/**
 * The json indexes a query may read. None for a user of an access database (see queryIndexes), so
 * their query neither reads the design documents nor replaces the cached catalog, which is kept by
 * the database's sequence, with one of their own sequence.
 */
async function indexCatalog(opened: OpenedDatabase): Promise<{ seq: number; indexes: readonly MangoIndex[] }> {
  return opened.scope !== undefined ? { seq: 0, indexes: [] } : catalog(opened);
}

/** The plan, with mango_idx's words for a sort no index serves in a partitioned database. */
function planOf(opened: OpenedDatabase, request: FindRequest, indexes: readonly MangoIndex[]): Plan {
  try {
    return plan(queryIndexes(opened, request, indexes), request, queryableMembers(opened));
  } catch (error) {
    if (!isCouchError(error) || error.error !== 'no_usable_index' || !isPartitioned(opened.security)) throw error;
    throw noScopedIndexForSort(request.partition === undefined ? 'global' : 'partitioned');
  }
}

/** The page a planned query reads: from a json index or `_all_docs`, or from a nouveau index through `search`. */
async function readPage(opened: OpenedDatabase, request: FindRequest, planned: Plan, seq: number, search: Search, signal?: AbortSignal): Promise<{ docs: JsonObject[]; bookmark: string; stats: ScanStats }> {
  if (planned.index.type === 'nouveau') {
    const page = await runNouveauCursor(opened, request, planned.index, search, planned.normal(), signal);
    const docs = request.conflicts ? await withConflicts(opened, page.docs.map((doc) => ({ doc }))) : page.docs;
    // A search index has no keys to count apart from its documents (CouchDB counts none).
    return { docs, bookmark: page.bookmark, stats: { keysExamined: 0, docsExamined: page.docsExamined } };
  }
  if (planned.index.type === 'json' && request.update) await updateIndex(opened, planned.index, seq);
  const maxExamined = opened.context.config.getInteger('mango', 'max_docs_examined');
  const { found, stats } = await runCursor(opened, request, planned, { maxExamined, signal });
  const docs = request.conflicts ? await withConflicts(opened, found) : found.map((item) => item.doc);
  return { docs, bookmark: encodeBookmark(planned.index.signature, found[found.length - 1]?.position), stats };
}

/** `POST /{db}/_find`: one page of matching documents; `signal` aborts when the client went away. */
export async function find(opened: OpenedDatabase, request: FindRequest, search: Search, signal?: AbortSignal): Promise<JsonObject> {
  const started = performance.now();
  const { seq, indexes } = await indexCatalog(opened);
  const planned = planOf(opened, request, indexes);
  const { docs, bookmark, stats } = await readPage(opened, request, planned, seq, search, signal);
  const body: JsonObject = { docs: docs.map((doc) => project(doc, request.fields)), bookmark };
  const warnings = warningsOf(opened, planned, stats, docs.length);
  if (warnings.length > 0) body['warning'] = warnings.join('\n');
  if (request.executionStats) {
    body['execution_stats'] = {
      total_keys_examined: stats.keysExamined,
      total_docs_examined: stats.docsExamined,
      total_quorum_docs_examined: 0,
      results_returned: docs.length,
      execution_time_ms: Math.round((performance.now() - started) * 1000) / 1000,
    };
  }
  return body;
}

/** `POST /{db}/_explain`: the index `_find` would use and how it would read it. */
export async function explain(opened: OpenedDatabase, request: FindRequest): Promise<JsonObject> {
  const planned = planOf(opened, request, (await indexCatalog(opened)).indexes);
  // `_all_docs` is read by id: its keys are the ids themselves, not one-member arrays.
  const special = planned.index.type === 'special';
  const opts: JsonObject = {
    use_index: request.useIndex,
    bookmark: request.bookmark ?? 'nil',
    limit: request.limit,
    skip: request.skip,
    sort: Object.fromEntries(request.sort.map((field) => [field.field, field.direction])),
    fields: request.fields ?? [],
    partition: request.partition ?? '',
    r: request.r,
    conflicts: request.conflicts,
    stale: request.stale,
    update: request.update,
    stable: request.stable,
    execution_stats: request.executionStats,
    allow_fallback: request.allowFallback,
  };
  const nouveau = planned.index.type === 'nouveau';
  const jsonHints = selectorHints(planned.clauses);
  return {
    dbname: opened.db,
    index: indexJson(planned.index),
    partitioned: isPartitioned(opened.security),
    selector: nouveau ? planned.normal() : conjunctionJson(planned.clauses),
    opts,
    limit: nouveau ? nouveauLimit(opened, request) : request.limit,
    skip: request.skip,
    fields: request.fields ?? [],
    index_candidates: planned.candidates
      .filter((candidate) => candidate.index !== planned.index)
      .map((candidate) => ({ index: indexJson(candidate.index), analysis: candidateAnalysis(candidate) })),
    selector_hints: [jsonHints, nouveauHints(jsonHints, planned.normal())],
    ...(nouveau
      ? { query: textQuery(planned.normal()), partition: request.partition ?? null, sort: nouveauSort(request.sort) ?? null }
      : {
          mrargs: {
            include_docs: true,
            view_type: 'map',
            reduce: false,
            partition: request.partition ?? null,
            start_key: special ? planned.keys.startKey[0] ?? null : planned.keys.startKey,
            end_key: special ? planned.keys.endKey[0] ?? null : planned.keys.endKey,
            direction: planned.descending ? 'rev' : 'fwd',
            stable: request.stable,
            update: request.update,
            conflicts: 'undefined',
          },
          covering: false,
        }),
  };
}

/** CouchDB 3.5's `selector_hints` entry for nouveau indexes: the fields a nouveau index could search. */
function nouveauHints(json: JsonObject, normal: JsonObject): JsonObject {
  const all = [...(json['indexable_fields'] as string[]), ...(json['unindexable_fields'] as string[])];
  const indexable = new Set(textIndexableFields(normal).map((field) => field.split(':')[0]!));
  return { type: 'nouveau', indexable_fields: [...indexable].sort(), unindexable_fields: [...new Set(all)].filter((field) => !indexable.has(field)).sort() };
}

/** A candidate's analysis as CouchDB 3.5 shows it: its first reason only; `covering` false for a json index (Divan always reads the documents), null otherwise. */
function candidateAnalysis(candidate: ReturnType<typeof planOf>['candidates'][number]): JsonObject {
  const reasons = candidate.reasons.length > 0 ? [{ name: candidate.reasons[0]! }] : [];
  return { usable: candidate.usable, reasons, ranking: candidate.usable ? 1 : 2, covering: candidate.index.type === 'json' ? false : null };
}
