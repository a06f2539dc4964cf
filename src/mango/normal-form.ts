/**
 * A selector in CouchDB's normal form (`mango_selector:normalize`), the shape the text query
 * translation (text-query.ts) reads: every object has one member; implicit `$and`s and `$eq`s are
 * explicit; field names are pushed down to the operators as dotted paths (`{"a": {"b": 1}}` is
 * `{"a.b": {"$eq": 1}}`), except below `$elemMatch`, `$allMatch` and `$keyMapMatch`, whose argument
 * is normalised on its own (its paths relative, `""` for the element itself); `$text` becomes
 * `{"$default": {"$text": …}}` and may stand at the root only; negations are pushed down to the
 * conditions (De Morgan, `$not $eq` as `$ne`, `$nor` as an `$and` of negations).
 *
 * The selector has been checked by `parseSelector` (operators and their arguments); only what
 * normalisation itself refuses is refused here, with CouchDB's errors.
 */
import { isObject } from '../documents/document-json.js';
import { badArgument, badField } from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';

const SUB_SELECTORS = new Set(['$elemMatch', '$allMatch', '$keyMapMatch']);
const NEGATED: Readonly<Record<string, string>> = { $lt: '$gte', $lte: '$gt', $eq: '$ne', $ne: '$eq', $gte: '$lt', $gt: '$lte', $in: '$nin', $nin: '$in' };

const only = (value: JsonObject): [string, Json] => Object.entries(value)[0]!;

/** norm_ops: explicit `$and` and `$eq`, `$text` as `$default`. */
function normOps(selector: Json): JsonObject {
  if (!isObject(selector)) return { $eq: selector };
  const keys = Object.keys(selector);
  if (keys.length === 0) return { $eq: {} };
  if (keys.length > 1) return { $and: keys.map((key) => normOps({ [key]: selector[key]! })) };
  const [key, argument] = only(selector);
  if (key === '$and' || key === '$or' || key === '$nor') return { [key]: (argument as Json[]).map(normOps) };
  if (key === '$not' || SUB_SELECTORS.has(key)) return { [key]: normOps(argument) };
  if (key === '$text') {
    if (typeof argument === 'object' && argument !== null) throw badArgument('$text', JSON.stringify(argument));
    return { $default: { $text: argument } };
  }
  if (key.startsWith('$')) return selector;
  return { [key]: normOps(argument) };
}

/** norm_fields: field names pushed down to their operators. */
function normFields(selector: JsonObject, path: string): JsonObject {
  const [key, argument] = only(selector);
  if (key === '$and' || key === '$or' || key === '$nor') return { [key]: (argument as JsonObject[]).map((item) => normFields(item, path)) };
  if (key === '$not') return { $not: normFields(argument as JsonObject, path) };
  if (SUB_SELECTORS.has(key)) return { [path]: { [key]: normFields(argument as JsonObject, '') } };
  if (key === '$default') {
    if (path !== '') throw badField(selector);
    return selector;
  }
  if (key.startsWith('$')) return { [path]: selector };
  return normFields(argument as JsonObject, path === '' ? key : `${path}.${key}`);
}

/** negate: the negation of a normalised selector, pushed as far down as it goes. */
function negate(selector: JsonObject): JsonObject {
  const [key, argument] = only(selector);
  if (key === '$not') return normNegations(argument as JsonObject);
  if (key === '$nor') return { $or: (argument as JsonObject[]).map(normNegations) };
  if (key === '$and') return { $or: (argument as JsonObject[]).map(negate) };
  if (key === '$or') return { $and: (argument as JsonObject[]).map(negate) };
  if (key === '$default') throw badArgument('$not', JSON.stringify(selector));
  if (Object.hasOwn(NEGATED, key)) return { [NEGATED[key]!]: argument };
  if (key === '$exists') return { $exists: argument !== true };
  if (key.startsWith('$')) return { $not: selector };
  return { [key]: negate(argument as JsonObject) };
}

/** norm_negations: negations moved down to the conditions. */
function normNegations(selector: JsonObject): JsonObject {
  const [key, argument] = only(selector);
  if (key === '$not') return negate(argument as JsonObject);
  if (key === '$nor') return { $and: (argument as JsonObject[]).map(negate) };
  if (key === '$and' || key === '$or') return { [key]: (argument as JsonObject[]).map(normNegations) };
  if (SUB_SELECTORS.has(key)) return { [key]: normNegations(argument as JsonObject) };
  return selector;
}

/** The normal form of a selector; `{}` stays `{}`. */
export function normalForm(selector: JsonObject): JsonObject {
  if (Object.keys(selector).length === 0) return {};
  return normNegations(normFields(normOps(selector), ''));
}

/** True when the selector (normal form) holds a `$text` anywhere (mango_idx_view's is_text_search). */
export function isTextSearch(selector: Json): boolean {
  if (Array.isArray(selector)) return selector.some(isTextSearch);
  if (!isObject(selector)) return false;
  return Object.entries(selector).some(([key, value]) => key === '$default' || isTextSearch(value));
}
