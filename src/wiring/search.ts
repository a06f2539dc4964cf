/**
 * Search's part of the composition root: the search service the routes use, running Nouveau
 * index functions in the data layer's JavaScript sandbox.
 */
import type { JsonObject } from '../json/json.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import type { Logger } from '../log/logger.js';
import { Search } from '../search/search.js';

export function wireSearch(sandbox: JsSandbox, log: Logger): Search {
  return new Search({ functions: (db) => (ddoc: JsonObject, path: readonly string[], docs: readonly JsonObject[]) => sandbox.index(db, ddoc as DesignDoc, path, docs), log });
}
