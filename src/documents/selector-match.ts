/**
 * Matching one document against a selector that `parseSelector` has checked: operators and their
 * arguments are trusted here, and `$regex` patterns come compiled.
 */
import { compare as collate } from '../collation/compare.js';
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';
import { compareRaw } from '../collation/raw-compare.js';
import { equal } from './selector-collation.js';
import type { SelectorRegex } from './selector-regex.js';
import type { ValueSet } from './selector-values.js';

/**
 * What `parseSelector` compiled once per selector: `$regex` patterns, `$in`/`$nin`/`$all` lists by
 * their argument array, and field names split into paths.
 */
export interface Compiled {
  readonly regexes: ReadonlyMap<string, SelectorRegex>;
  readonly sets: ReadonlyMap<Json[], ValueSet>;
  readonly paths: ReadonlyMap<string, string[]>;
}

type Compare = (a: Json, b: Json) => number;

/**
 * A dotted field path as CouchDB's `mango_util:parse_field` reads it: split at each dot not
 * preceded by a backslash, then every backslash dropped (`a\\.b` is the field `a.b`, `\\$a` is `$a`).
 */
export function fieldPath(field: string): string[] {
  return field.split(/(?<!\\)\./).map((part) => part.replaceAll('\\', ''));
}

export function lookup(value: Json | undefined, path: readonly string[]): Json | undefined {
  let current = value;
  for (const part of path) {
    if (!isObject(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

export function matchObject(compiled: Compiled, selector: JsonObject, value: Json | undefined, compare: Compare = collate): boolean {
  for (const [key, argument] of Object.entries(selector)) {
    if (!matchEntry(compiled, key, argument, value, compare)) return false;
  }
  return true;
}

function matchEntry(compiled: Compiled, key: string, argument: Json, value: Json | undefined, compare: Compare): boolean {
  switch (key) {
    case '$and':
      return (argument as JsonObject[]).every((item) => matchObject(compiled, item, value, compare));
    case '$or':
      return (argument as JsonObject[]).some((item) => matchObject(compiled, item, value, compare));
    case '$nor':
      return !(argument as JsonObject[]).some((item) => matchObject(compiled, item, value, compare));
    case '$not':
      return !matchObject(compiled, argument as JsonObject, value, compare);
    default:
      if (key.startsWith('$')) return matchCondition(compiled, key, argument, value, compare);
      // CouchDB compares `_id` in Erlang's term order (`mango_json:cmp_raw`), not in view collation.
      return matchField(compiled, argument, lookup(value, compiled.paths.get(key) ?? fieldPath(key)), key === '_id' ? compareRaw : collate);
  }
}

/** The value of a field against what the selector says about it. */
function matchField(compiled: Compiled, argument: Json, value: Json | undefined, compare: Compare): boolean {
  if (isObject(argument)) {
    const keys = Object.keys(argument);
    if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
      return keys.every((key) => matchEntry(compiled, key, argument[key]!, value, compare));
    }
    if (keys.length === 0) return value !== undefined && isObject(value) && Object.keys(value).length === 0;
    return matchObject(compiled, argument, value);
  }
  return value !== undefined && equal(value, argument);
}

function matchCondition(compiled: Compiled, operator: string, argument: Json, value: Json | undefined, compare: Compare): boolean {
  switch (operator) {
    case '$exists':
      return (value !== undefined) === argument;
    case '$ne':
      return value === undefined || !equal(value, argument, compare);
    case '$text':
      // As CouchDB's `$default`: the text index that found the document is believed.
      return true;
    default:
      break;
  }
  if (value === undefined) return false;
  switch (operator) {
    case '$eq':
      return equal(value, argument, compare);
    case '$gt':
      return compare(value, argument) > 0;
    case '$gte':
      return compare(value, argument) >= 0;
    case '$lt':
      return compare(value, argument) < 0;
    case '$lte':
      return compare(value, argument) <= 0;
    case '$in':
      // As CouchDB's: an array value matches when any of its elements equals any argument.
      return compiled.sets.get(argument as Json[])!.hasAnyOf(value);
    case '$nin':
      // A missing field fails `$nin` (above), as CouchDB's `mango_selector:match`; an array value
      // passes when none of its elements is an argument.
      return !compiled.sets.get(argument as Json[])!.hasAnyOf(value);
    case '$type':
      return typeName(value) === argument;
    case '$size':
      return Array.isArray(value) && value.length === argument;
    case '$mod': {
      const [divisor, remainder] = argument as [number, number];
      return typeof value === 'number' && Number.isInteger(value) && value % divisor === remainder;
    }
    case '$regex':
      return typeof value === 'string' && compiled.regexes.get(argument as string)!.test(value);
    case '$beginsWith':
      return typeof value === 'string' && value.startsWith(argument as string);
    case '$all':
      return Array.isArray(value) && compiled.sets.get(argument as Json[])!.allIn(value);
    case '$elemMatch':
      return Array.isArray(value) && value.some((item) => matchField(compiled, argument, item, collate));
    case '$allMatch':
      return Array.isArray(value) && value.length > 0 && value.every((item) => matchField(compiled, argument, item, collate));
    case '$keyMapMatch':
      return isObject(value) && Object.keys(value).some((key) => matchField(compiled, argument, key, collate));
    default:
      return false;
  }
}

function typeName(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
