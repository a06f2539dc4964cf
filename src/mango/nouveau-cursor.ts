/**
 * Running a `_find` a nouveau Mango index serves (CouchDB's `mango_cursor_nouveau`): the selector
 * becomes a Lucene query (text-query.ts), the search index answers it in pages of at most
 * `[nouveau] max_limit` hits, in the `sort` asked (field names escaped as the index names them:
 * `"age:number"` sorts by `age_3anumber`) or by relevance; each hit's document is read and matched
 * against the whole selector, as the caller may see it; `skip` and `limit` (at most `max_limit`)
 * count the matching ones, and past `[mango] max_docs_examined` documents read the query is refused,
 * as a json index's is. The bookmark continues after the last hit examined.
 */
import type { OpenedDatabase } from '../databases/opened-database.js';
import { matchesSelector } from '../documents/selector.js';
import { isCouchError } from '../errors/couch-error.js';
import { invalidBookmark, tooManyExamined } from '../errors/mango-errors.js';
import type { JsonObject } from '../json/json.js';
import type { Search } from '../search/search.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { FindRequest } from './find-request.js';
import type { MangoIndex } from './index-definitions.js';
import type { SortField } from './sort.js';
import { escapeFieldName, textQuery } from './text-query.js';

interface NouveauPage {
  docs: JsonObject[];
  bookmark: string;
  docsExamined: number;
}

/** mango_cursor_nouveau:sort_query: `["name", "-age_3anumber"]`, or none (relevance). */
export function nouveauSort(sort: readonly SortField[]): string[] | undefined {
  if (sort.length === 0) return undefined;
  return sort.map((field) => `${field.direction === 'desc' ? '-' : ''}${escapeFieldName(field.field)}`);
}

/** The largest page a nouveau index serves (`[nouveau] max_limit`). */
export function nouveauLimit(opened: OpenedDatabase, request: FindRequest): number {
  return Math.min(opened.context.config.getInteger('nouveau', 'max_limit'), request.limit);
}

async function liveDocument(opened: OpenedDatabase, id: string): Promise<JsonObject | undefined> {
  const stored = await opened.storage.readDocument(opened.db, id);
  if (stored === undefined || stored.deleted) return undefined;
  return opened.view.listed({ _id: id, _rev: stored.rev, ...stored.body } as JsonObject);
}

/** One page of a `_find` served by `index`, a nouveau index. */
export async function runNouveauCursor(opened: OpenedDatabase, request: FindRequest, index: MangoIndex, search: Search, normal: JsonObject, signal?: AbortSignal): Promise<NouveauPage> {
  const searchIndex = index.nouveau!.search;
  const q = textQuery(normal);
  let bookmark = request.bookmark;
  const limit = nouveauLimit(opened, request);
  const page: NouveauPage = { docs: [], bookmark: bookmark ?? 'nil', docsExamined: 0 };
  if (q === '' || limit === 0) return page;
  if (request.update) await search.refresh(opened, searchIndex);
  const max = opened.context.config.getInteger('nouveau', 'max_limit');
  const maxExamined = opened.context.config.getInteger('mango', 'max_docs_examined');
  const sort = nouveauSort(request.sort);
  const seen = new Set<string>();
  let skip = request.skip;
  const turns = LoopTurns.until(signal);
  for (;;) {
    const want = Math.min(max, limit - page.docs.length + skip);
    const args = { q, limit: want, ...(sort === undefined ? {} : { sort }), ...(bookmark === undefined ? {} : { bookmark }), includeDocs: false, topN: 10, update: false };
    let hits;
    try {
      hits = await search.hits(opened, searchIndex, args, request.partition);
    } catch (error) {
      if (isCouchError(error) && error.reason === 'Invalid bookmark parameter supplied') throw invalidBookmark(bookmark);
      throw error;
    }
    if (hits.length === 0) return page;
    for (const hit of hits) {
      await turns.maybeYield();
      bookmark = hit.bookmark;
      page.bookmark = bookmark;
      const doc = await liveDocument(opened, hit.id);
      if (doc === undefined) continue;
      if (++page.docsExamined > maxExamined) throw tooManyExamined(maxExamined);
      if (!matchesSelector(request.selector, doc) || seen.has(hit.id)) continue;
      seen.add(hit.id);
      if (skip > 0) {
        skip--;
        continue;
      }
      page.docs.push(doc);
      if (page.docs.length === limit) return page;
    }
    if (hits.length < want) return page;
  }
}
