/**
 * What the storage backends keep of full-text search indexes (Nouveau's `_nouveau`, docs/search.md):
 * one index per design-document signature and database, holding per document the fields its index
 * function gave: `text` fields analysed for full-text search (SQLite FTS5, PostgreSQL tsvector),
 * `string` and `double` fields for exact matches, ranges, sorting, counts and ranges facets, and
 * the stored values hits show. The search layer (src/search/) turns a Lucene query into a
 * `SearchPlan` whose text leaves are already written in the backend's syntax (`textSyntax`).
 */

export type SearchFieldType = 'text' | 'string' | 'double' | 'stored';

/** One `index(type, name, value, options)` call of a document. */
export interface SearchField {
  type: SearchFieldType;
  name: string;
  value: string | number;
  /** Returned with hits (`fields`). */
  store: boolean;
  /** Text fields: the Nouveau analyzer name (docs/search.md says how each backend approximates it). */
  analyzer?: string;
}

/** The fields a document now has in the index; none for a deleted or unindexed document. */
export interface SearchDocument {
  id: string;
  fields: SearchField[];
}

/** A set of documents with a relevance score each, as the backend evaluates it. */
export type SearchPlan =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /** Full-text match of one text field; `match` is in the backend's `textSyntax`. */
  | { readonly kind: 'text'; readonly field: string; readonly analyzer: string; readonly match: string }
  /** A string field equal to `equals`, matching a Lucene wildcard `pattern` (`*`, `?`), or in a range. */
  | { readonly kind: 'string'; readonly field: string; readonly equals?: string; readonly pattern?: string; readonly range?: Bounds<string> }
  | { readonly kind: 'double'; readonly field: string; readonly range: Bounds<number> }
  /** Documents with ids from `gte` (included) to `lt` (excluded): a partition. */
  | { readonly kind: 'ids'; readonly gte: string; readonly lt: string }
  | { readonly kind: 'and' | 'or'; readonly parts: readonly SearchPlan[] }
  | { readonly kind: 'not'; readonly positive: SearchPlan; readonly negative: SearchPlan };

export interface Bounds<T> {
  lower?: T;
  upper?: T;
  includeLower: boolean;
  includeUpper: boolean;
}

/** One sort key: relevance, a string or double field, then always the document id. */
export interface SearchSortKey {
  by: 'score' | 'id' | 'string' | 'double';
  field?: string;
  descending: boolean;
}

export interface RangeFacet {
  label: string;
  min?: number;
  max?: number;
  minInclusive: boolean;
  maxInclusive: boolean;
}

export interface SearchRequest {
  plan: SearchPlan;
  /** Ends with the id key. */
  sort: readonly SearchSortKey[];
  limit: number;
  /** The sort values of the last hit already seen (a bookmark): hits strictly after it. */
  after?: readonly (string | number)[];
  counts?: readonly string[];
  ranges?: Readonly<Record<string, readonly RangeFacet[]>>;
  /** Facet values per field at most (`top_n`). */
  topN: number;
}

export interface SearchHitRow {
  id: string;
  /** One value per sort key: the score, the field's value (null when the document has none), the id. */
  order: (string | number | null)[];
  /** Values to resume after this hit (missing field values as the sort places them). */
  after: (string | number)[];
  /** Stored values, in the order they were indexed. */
  fields: { name: string; value: string | number }[];
}

export interface SearchAnswer {
  totalHits: number;
  hits: SearchHitRow[];
  counts?: Record<string, Record<string, number>>;
  ranges?: Record<string, Record<string, number>>;
}

export interface SearchIndexInfo {
  signature: string;
  updateSeq: number;
  docs: number;
}

export interface SearchStore {
  /** The syntax of `text` plan leaves: SQLite FTS5 MATCH or PostgreSQL `to_tsquery` text. */
  readonly textSyntax: 'fts5' | 'tsquery';
  /** Creates the index when missing; answers the update sequence it has reached. */
  open(db: string, signature: string): Promise<number>;
  /** Replaces the fields of the given documents and records `updateSeq`, in one transaction. */
  update(db: string, signature: string, documents: readonly SearchDocument[], updateSeq: number): Promise<void>;
  /** Each field's type as first indexed (a field keeps its first type, as in Nouveau). */
  fieldTypes(db: string, signature: string): Promise<Map<string, SearchFieldType>>;
  search(db: string, signature: string, request: SearchRequest): Promise<SearchAnswer>;
  /**
   * The distinct terms of a text field (as analysed; on SQLite those of every text field sharing
   * its tokenizer) or the distinct values of a string field: what fuzzy and regex queries expand over.
   */
  vocabulary(db: string, signature: string, field: string, type: 'text' | 'string', analyzer: string): Promise<string[]>;
  /** The terms `text` becomes under a Nouveau analyzer's approximation, in order (`_nouveau_analyze`). */
  analyze(analyzer: string, text: string): Promise<string[]>;
  /** Every index of the database. */
  list(db: string): Promise<SearchIndexInfo[]>;
  /** Drops the given indexes; answers how many existed. */
  drop(db: string, signatures: readonly string[]): Promise<number>;
  /** Runs `work` as the only updater of the index (as `ViewStore.exclusive`). */
  exclusive<T>(db: string, signature: string, work: () => Promise<T>): Promise<T>;
}
