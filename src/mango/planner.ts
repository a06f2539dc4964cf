/**
 * Choosing the index a `_find` reads, as CouchDB's `mango_idx`/`mango_cursor_view` choose it:
 *
 * - candidates: `_all_docs` and every json index without a partial filter, plus the `use_index` one;
 * - usable: a json index whose fields the selector requires to exist (sort fields excepted) and whose
 *   order serves the sort (columns held constant by `$eq` may be skipped); `_all_docs` without a
 *   sort, or sorted by `_id` with a range on `_id`. None usable: 400 `no_usable_index`;
 * - chosen: the `use_index` one when usable; otherwise a json index whenever one is usable (CouchDB
 *   groups candidates by cursor and tries `_all_docs` last), the one whose leading columns cover
 *   most of the selector's range fields, then the one with fewer columns, then by design document
 *   and name;
 * - nouveau indexes (nouveau-index.ts) come after json ones and before `_all_docs`: usable when
 *   their fields cover the selector's (a `$text` selector needs one; json indexes never serve it),
 *   and only one may be usable unless `use_index` picks it.
 *
 * The chosen index's key range comes from the selector's ranges on its leading columns.
 */
import { multipleNouveauIndexes, noIndexForSort, noTextIndex, useIndexUnsuitable } from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import { isTextSearch, normalForm } from './normal-form.js';
import { nouveauUnusable } from './nouveau-index.js';
import type { FindRequest } from './find-request.js';
import { ALL_DOCS_INDEX, type MangoIndex } from './index-definitions.js';
import { afterPrefix, encodeKey } from './index-keys.js';
import { fieldRanges, hasRequiredFields, isConstantField, isEmptyRange, isPoint, normalize, type Clause, type FieldRange } from './selector-analysis.js';
import { readableIndex, type ShownAsStored } from './readable-indexes.js';
import { isDescending } from './sort.js';

interface KeyRange {
  gte?: Uint8Array;
  lt?: Uint8Array;
  /** The same bounds as JSON keys, for `_explain`. */
  startKey: Json[];
  endKey: Json[];
  empty: boolean;
}

interface Candidate {
  index: MangoIndex;
  usable: boolean;
  reasons: string[];
}

export interface Plan {
  index: MangoIndex;
  clauses: Clause[];
  ranges: Map<string, FieldRange>;
  keys: KeyRange;
  descending: boolean;
  candidates: Candidate[];
  warnings: string[];
  /** The selector in CouchDB's normal form (what a nouveau index is queried with). */
  normal: () => JsonObject;
}

interface TextAsk {
  /** The selector holds `$text`: only a nouveau index can serve it. */
  search: boolean;
  normal: () => JsonObject;
}

/** The normal form is worked out once, and only when a nouveau index or `$text` needs it. */
function textAsk(selector: JsonObject): TextAsk {
  let normal: JsonObject | undefined;
  const form = (): JsonObject => (normal ??= normalForm(selector));
  return { search: JSON.stringify(selector).includes('"$text"') && isTextSearch(form()), normal: form };
}

function canUseSort(columns: readonly string[], sortFields: readonly string[], clauses: readonly Clause[]): boolean {
  if (sortFields.length === 0) return true;
  if (columns.length === 0) return false;
  if (columns[0] === sortFields[0]) return sortFields.length <= columns.length && sortFields.every((field, i) => columns[i] === field);
  return isConstantField(clauses, columns[0]!) && canUseSort(columns.slice(1), sortFields, clauses);
}

/** What a query asks of the indexes: its clauses and ranges for json ones, its normal form for nouveau ones. */
interface Asked {
  clauses: readonly Clause[];
  ranges: Map<string, FieldRange>;
  sortFields: readonly string[];
  text: TextAsk;
}

function usability(index: MangoIndex, asked: Asked): string[] {
  const { clauses, ranges, sortFields } = asked;
  if (index.nouveau !== undefined) return nouveauUnusable(index.nouveau.definition, asked.text.normal());
  const columns = index.fields.map((field) => field.field);
  const reasons: string[] = asked.text.search && index.type === 'json' ? ['needs_text_search'] : [];
  if (index.type === 'special') {
    if (sortFields.length === 0) return [];
    if (!ranges.has('_id')) reasons.push('field_mismatch');
  } else {
    const required = columns.filter((column) => !sortFields.includes(column) && column !== '_id' && column !== '_rev');
    if (!hasRequiredFields(clauses, required)) reasons.push('field_mismatch');
  }
  if (!canUseSort(columns, sortFields, clauses)) reasons.push('sort_order_mismatch');
  return reasons;
}

function named(index: MangoIndex, useIndex: readonly string[]): boolean {
  return useIndex.length > 0 && index.ddoc === `_design/${useIndex[0]}` && (useIndex.length === 1 || index.name === useIndex[1]);
}

/** CouchDB's ranking: fewest range fields left uncovered, then fewest columns, then by name (`_all_docs` first). */
function best(indexes: MangoIndex[], ranges: Map<string, FieldRange>): MangoIndex {
  const score = (index: MangoIndex): [number, number, string] => {
    let prefix = 0;
    while (prefix < index.fields.length && ranges.has(index.fields[prefix]!.field)) prefix++;
    return [ranges.size - prefix, index.fields.length, index.ddoc === null ? '' : `${index.ddoc}\u0000${index.name}`];
  };
  return indexes
    .map((index) => ({ index, score: score(index) }))
    .sort((a, b) => a.score[0] - b.score[0] || a.score[1] - b.score[1] || (a.score[2] < b.score[2] ? -1 : a.score[2] > b.score[2] ? 1 : 0))[0]!.index;
}

/** The key range of a scan of `columns` under the selector's ranges. */
function keyRange(columns: readonly string[], ranges: Map<string, FieldRange>): KeyRange {
  const empty = [...ranges.values()].some(isEmptyRange);
  const prefix: Json[] = [];
  for (const column of columns) {
    const range = ranges.get(column);
    if (isPoint(range)) {
      prefix.push(range!.low!.value);
      continue;
    }
    const low = range?.low;
    const high = range?.high;
    const lowKey = low === undefined ? undefined : encodeKey([...prefix, low.value]);
    const highKey = high === undefined ? undefined : encodeKey([...prefix, high.value]);
    const base = prefix.length === 0 ? undefined : encodeKey(prefix);
    return {
      gte: lowKey === undefined ? base : low!.inclusive ? lowKey : afterPrefix(lowKey),
      lt: highKey === undefined ? (base === undefined ? undefined : afterPrefix(base)) : high!.inclusive ? afterPrefix(highKey) : highKey,
      startKey: low === undefined ? prefix : [...prefix, low.value],
      endKey: high === undefined ? [...prefix, '<MAX>'] : [...prefix, high.value],
      empty,
    };
  }
  const whole = encodeKey(prefix);
  return { gte: whole, lt: afterPrefix(whole), startKey: prefix, endKey: prefix, empty };
}

const EVERY_MEMBER: ShownAsStored = () => true;

/**
 * Picks the index for a request among the database's json indexes; one built on members the
 * caller does not read as stored (`shown`) is never usable (readable-indexes.ts).
 */
export function plan(indexes: readonly MangoIndex[], request: FindRequest, shown: ShownAsStored = EVERY_MEMBER): Plan {
  const clauses = normalize(request.selector.root);
  const ranges = fieldRanges(clauses);
  const text = textAsk(request.selector.root);
  const asked: Asked = { clauses, ranges, sortFields: request.sort.map((field) => field.field), text };
  const all = [ALL_DOCS_INDEX, ...indexes];
  const candidates = all.map((index) => {
    const considered = index.partialFilter === undefined || named(index, request.useIndex);
    const reasons = !readableIndex(index, shown) ? ['hidden_field'] : considered ? usability(index, asked) : ['excluded_by_partial_filter'];
    return { index, usable: reasons.length === 0, reasons };
  });
  const usable = candidates.filter((candidate) => candidate.usable).map((candidate) => candidate.index);
  if (usable.length === 0) throw noIndexForSort();
  const warnings: string[] = [];
  let pool = usable;
  if (request.useIndex.length > 0) {
    const chosen = usable.filter((index) => named(index, request.useIndex));
    if (chosen.length > 0) pool = chosen;
    else if (!request.allowFallback) throw useIndexUnsuitable(request.useIndex[0]!, request.useIndex[1]);
    else warnings.push(useIndexWarning(request.useIndex));
  }
  // CouchDB serves a query from json indexes whenever one is usable, then from a nouveau one; `_all_docs` only otherwise.
  const json = pool.filter((candidate) => candidate.type === 'json');
  const nouveau = pool.filter((candidate) => candidate.type === 'nouveau');
  if (json.length === 0 && nouveau.length > 1) throw multipleNouveauIndexes();
  // CouchDB answers `$text` from `_all_docs` too, where it matches every document: Divan refuses.
  if (json.length === 0 && nouveau.length === 0 && text.search) throw noTextIndex();
  const index = json.length > 0 ? best(json, ranges) : nouveau.length > 0 ? nouveau[0]! : best(pool, ranges);
  const keys = keyRange(index.fields.map((field) => field.field), ranges);
  return { index, clauses, ranges, keys, descending: isDescending(request.sort), candidates, warnings, normal: text.normal };
}

function useIndexWarning(useIndex: readonly string[]): string {
  return useIndex.length === 1
    ? `_design/${useIndex[0]} was not used because it does not contain a valid index for this query.`
    : `_design/${useIndex[0]}, ${useIndex[1]} was not used because it is not a valid index for this query.`;
}
