/**
 * Search's part of the composition root: the search service the routes use, running Nouveau
 * index functions in the data layer's JavaScript sandbox and analysing text with the backend's search store.
 * The indexes of `language: "query"` design documents (Mango's nouveau indexes) have their fields
 * derived natively instead, as CouchDB's `mango_native_proc` serves that language.
 */
import type { JsonObject } from '../json/json.js';
import type { DesignDoc, JsSandbox } from '../js/sandbox.js';
import type { Logger } from '../log/logger.js';
import { mangoIndexFunction } from '../mango/nouveau-index-function.js';
import { Search } from '../search/search.js';
import type { SearchStore } from '../storage/storage.js';

/** `store`: the backend's, for `_nouveau_analyze` (which belongs to no database). */
export function wireSearch(sandbox: JsSandbox, log: Logger, store: SearchStore): Search {
  return new Search({
    functions: (db) => (ddoc: JsonObject, path: readonly string[], docTexts: readonly string[]) =>
      ddoc['language'] === 'query'
        ? Promise.resolve(mangoIndexFunction(ddoc, path, docTexts.map((text) => JSON.parse(text) as JsonObject)))
        : sandbox.index(db, ddoc as DesignDoc, path, docTexts),
    log,
    store,
  });
}
