/**
 * What the query planner needs to know about a selector, read from its normal form (CouchDB's
 * `mango_selector:normalize`): a conjunction of clauses, each a condition on one dotted field
 * (`{"a": {"b": 1}}` is `a.b $eq 1`), an `$or` of conjunctions, or something else ($nor, $not).
 *
 * From it: whether a field is required to exist (an index only holds documents that have all its
 * fields), whether a field is held constant by `$eq` (then a sort may skip that index column), and
 * the range of values each field may take, which becomes the range of keys an index scan reads.
 */
import { compare } from '../collation/compare.js';
import { isObject } from '../documents/document-json.js';
import type { Json, JsonObject } from '../json/json.js';

export type Clause =
  | { kind: 'field'; field: string; op: string; arg: Json }
  | { kind: 'or'; branches: Clause[][] }
  | { kind: 'other'; json: JsonObject };

interface Bound {
  value: Json;
  inclusive: boolean;
}

export interface FieldRange {
  low?: Bound;
  high?: Bound;
}

/** Operators that make a field indexable (CouchDB's `mango_idx_view:indexable`); `$exists` gives no bounds. */
const INDEXABLE_OPERATORS = new Set(['$eq', '$gt', '$gte', '$lt', '$lte', '$beginsWith', '$exists']);
/** The character ICU sorts last: `$beginsWith "ab"` reads keys up to `"ab\uFFFF"`, as CouchDB does. */
const BEYOND_STRINGS = '\uFFFF';

/** The selector as a conjunction of clauses. */
export function normalize(selector: JsonObject, prefix = ''): Clause[] {
  const clauses: Clause[] = [];
  for (const [key, value] of Object.entries(selector)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const item of value) if (isObject(item)) clauses.push(...normalize(item, prefix));
    } else if (key === '$or' && Array.isArray(value)) {
      clauses.push({ kind: 'or', branches: value.map((item) => (isObject(item) ? normalize(item, prefix) : [])) });
    } else if (key.startsWith('$')) {
      clauses.push({ kind: 'other', json: { [key]: value } });
    } else {
      fieldClauses(prefix === '' ? key : `${prefix}.${key}`, value, clauses);
    }
  }
  return clauses;
}

function fieldClauses(field: string, value: Json, clauses: Clause[]): void {
  if (!isObject(value)) {
    clauses.push({ kind: 'field', field, op: '$eq', arg: value });
    return;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) clauses.push({ kind: 'field', field, op: '$eq', arg: {} });
  else if (!keys.every((key) => key.startsWith('$'))) clauses.push(...normalize(value, field));
  else {
    for (const key of keys) {
      const argument = value[key]!;
      if (key === '$and' && Array.isArray(argument)) for (const item of argument) fieldClauses(field, item, clauses);
      else if (key === '$or' && Array.isArray(argument)) {
        clauses.push({ kind: 'or', branches: argument.map((item) => { const branch: Clause[] = []; fieldClauses(field, item, branch); return branch; }) });
      } else if (key === '$not' || key === '$nor') clauses.push({ kind: 'other', json: { [field]: { [key]: argument } } });
      else clauses.push({ kind: 'field', field, op: key, arg: argument });
    }
  }
}

function clauseJson(clause: Clause): JsonObject {
  if (clause.kind === 'field') return { [clause.field]: { [clause.op]: clause.arg } };
  if (clause.kind === 'other') return clause.json;
  return { $or: clause.branches.map(conjunctionJson) };
}

/** The normal form as JSON, as `_explain` shows it. */
export function conjunctionJson(clauses: readonly Clause[]): JsonObject {
  return clauses.length === 1 ? clauseJson(clauses[0]!) : { $and: clauses.map(clauseJson) };
}

/** The fields of `required` that the clauses do not force to exist (CouchDB's `has_required_fields`). */
function missingFields(clauses: readonly Clause[], required: readonly string[]): string[] {
  let remaining = [...required];
  for (const clause of clauses) {
    if (remaining.length === 0) break;
    if (clause.kind === 'field' && !(clause.op === '$exists' && clause.arg === false)) remaining = remaining.filter((field) => field !== clause.field);
    else if (clause.kind === 'or') remaining = [...new Set(clause.branches.flatMap((branch) => missingFields(branch, remaining)))];
  }
  return remaining;
}

export function hasRequiredFields(clauses: readonly Clause[], required: readonly string[]): boolean {
  return missingFields(clauses, required).length === 0;
}

export function isConstantField(clauses: readonly Clause[], field: string): boolean {
  return clauses.some((clause) => clause.kind === 'field' && clause.field === field && clause.op === '$eq');
}

function tighter(current: Bound | undefined, next: Bound, low: boolean): Bound {
  if (current === undefined) return next;
  const order = compare(next.value, current.value);
  if (order === 0) return next.inclusive ? current : next;
  return (low ? order > 0 : order < 0) ? next : current;
}

/**
 * Each indexable field's range from the top-level conditions (`$eq`, `$gt`, `$gte`, `$lt`, `$lte`,
 * `$beginsWith`; `$exists` names the field without bounding it), in the order fields first appear.
 */
export function fieldRanges(clauses: readonly Clause[]): Map<string, FieldRange> {
  const ranges = new Map<string, FieldRange>();
  for (const clause of clauses) {
    if (clause.kind !== 'field' || !INDEXABLE_OPERATORS.has(clause.op)) continue;
    const range = ranges.get(clause.field) ?? {};
    ranges.set(clause.field, range);
    if (clause.op === '$exists') continue;
    if (clause.op === '$beginsWith') {
      if (typeof clause.arg !== 'string') continue;
      range.low = tighter(range.low, { value: clause.arg, inclusive: true }, true);
      range.high = tighter(range.high, { value: `${clause.arg}${BEYOND_STRINGS}`, inclusive: true }, false);
      continue;
    }
    const bound = { value: clause.arg, inclusive: clause.op === '$eq' || clause.op.endsWith('e') };
    if (clause.op !== '$lt' && clause.op !== '$lte') range.low = tighter(range.low, bound, true);
    if (clause.op !== '$gt' && clause.op !== '$gte') range.high = tighter(range.high, bound, false);
  }
  return ranges;
}

/** A range no value can fall in (`$gt 5` with `$lt 3`). */
export function isEmptyRange(range: FieldRange): boolean {
  if (range.low === undefined || range.high === undefined) return false;
  const order = compare(range.low.value, range.high.value);
  return order > 0 || (order === 0 && !(range.low.inclusive && range.high.inclusive));
}

/** A range of exactly one value. */
export function isPoint(range: FieldRange | undefined): boolean {
  return range?.low !== undefined && range.high !== undefined && range.low.inclusive && range.high.inclusive && compare(range.low.value, range.high.value) === 0;
}

/** Every field a selector names (CouchDB's `mango_selector:fields`, through `$and`, `$or`, `$nor` lists). */
function namedFields(clauses: readonly Clause[]): string[] {
  return clauses.flatMap((clause) => {
    if (clause.kind === 'field') return [clause.field];
    if (clause.kind === 'or') return clause.branches.flatMap(namedFields);
    return Object.entries(clause.json).flatMap(([key, value]) =>
      key.startsWith('$') && Array.isArray(value) ? value.flatMap((item) => (isObject(item) ? namedFields(normalize(item)) : [])) : [key],
    );
  });
}

/**
 * `_explain`'s `selector_hints` for json indexes (CouchDB 3.5's `extract_selector_hints`): the fields
 * a json index could locate (top-level conditions with an indexable operator) and the others.
 */
export function selectorHints(clauses: readonly Clause[]): JsonObject {
  const indexable = new Set(clauses.flatMap((clause) => (clause.kind === 'field' && INDEXABLE_OPERATORS.has(clause.op) ? [clause.field] : [])));
  const unindexable = new Set(namedFields(clauses).filter((field) => !indexable.has(field)));
  return { type: 'json', indexable_fields: [...indexable].sort(), unindexable_fields: [...unindexable].sort() };
}
