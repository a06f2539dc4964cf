/**
 * A Nouveau index of a design document as the search engine sees it: the index function, the
 * analyzers (`default_analyzer`, default `standard`, and `field_analyzers`), and the signature the
 * stored index is keyed by: a sha256 of what changes its content (language, analyzers, function),
 * as CouchDB's `nouveau_util:design_doc_to_index`, so editing anything else keeps the index.
 */
import { createHash } from 'node:crypto';
import { isObject } from '../documents/document-json.js';
import { notFound } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';

export interface SearchIndex {
  /** `_design/…`. */
  ddocId: string;
  name: string;
  signature: string;
  defaultAnalyzer: string;
  fieldAnalyzers: Readonly<Record<string, string>>;
  /** The design document as stored, for the sandbox. */
  doc: JsonObject;
  /** Queries name a partition (`_partition/{p}/…`), as the design document's views would. */
  partitioned: boolean;
}

/** The index `name` of the design document; 404 `{name} not found.` as CouchDB when it has none. */
export function searchIndexOf(doc: JsonObject, name: string, partitioned: boolean): SearchIndex {
  const all = doc['nouveau'];
  const definition = isObject(all) && Object.hasOwn(all, name) ? all[name] : undefined;
  // A `language: "query"` design document's index is a Mango definition, its fields derived natively (src/mango/nouveau-fields.ts).
  const query = doc['language'] === 'query';
  if (!isObject(definition) || (query ? !isObject(definition['index']) : typeof definition['index'] !== 'string')) throw notFound(`${name} not found.`);
  const defaultAnalyzer = typeof definition['default_analyzer'] === 'string' ? definition['default_analyzer'] : 'standard';
  const fields = isObject(definition['field_analyzers']) ? definition['field_analyzers'] : {};
  const fieldAnalyzers = Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  const language = typeof doc['language'] === 'string' ? doc['language'] : 'javascript';
  const signed = [language, defaultAnalyzer, Object.entries(fieldAnalyzers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), definition['index'], partitioned];
  const signature = createHash('sha256').update(JSON.stringify(signed)).digest('hex');
  return { ddocId: String(doc['_id']), name, signature, defaultAnalyzer, fieldAnalyzers, doc, partitioned };
}

/** The analyzer of a text field. */
export function analyzerOf(index: SearchIndex, field: string): string {
  return Object.hasOwn(index.fieldAnalyzers, field) ? index.fieldAnalyzers[field]! : index.defaultAnalyzer;
}
