/**
 * Mango selectors (CouchDB's `mango_selector`) as the `_selector` filter of `_changes` uses them:
 * `parseSelector` checks a selector once (unknown operators and malformed arguments are 400s, as
 * CouchDB's normalisation answers) and compiles its `$regex` patterns once, with RE2
 * (`selector-regex.ts`); `matchesSelector` tests a document against it.
 *
 * A selector's size is bounded (`MAX_SELECTOR_NODES` JSON values, `MAX_SELECTOR_DEPTH` levels), so
 * that matching one document stays short; callers matching many documents yield between them.
 *
 * Values compare in CouchDB's collation of JSON types (null < false < true < numbers < strings <
 * arrays < objects); strings compare by code point, not by ICU collation as CouchDB's `$gt`/`$lt` do.
 *
 * @example
 * const selector = parseSelector({ type: 'note', year: { $gte: 2020 } })
 * matchesSelector(selector, { _id: 'a', type: 'note', year: 2024 }) // true
 */
import { badRequest } from '../errors/catalog.js';
import type { Json, JsonObject } from '../storage/storage.js';
import { compileRegex, type SelectorRegex } from './selector-regex.js';

/** A checked selector and its `$regex` patterns, each compiled once. */
export interface Selector {
  readonly root: JsonObject;
  readonly regexes: ReadonlyMap<string, SelectorRegex>;
}

/** JSON values (objects, arrays, scalars, keys not counted) one selector may hold. */
export const MAX_SELECTOR_NODES = 10_000;
/** Nesting of objects and arrays one selector may have. */
export const MAX_SELECTOR_DEPTH = 64;

const CONDITION_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$type',
  '$size',
  '$mod',
  '$regex',
  '$all',
  '$elemMatch',
  '$allMatch',
  '$keyMapMatch',
  '$not',
  '$beginsWith',
]);
const COMBINATION_OPERATORS = new Set(['$and', '$or', '$nor']);
const TYPES = new Set(['null', 'boolean', 'number', 'string', 'array', 'object']);

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const invalid = (reason: string) => badRequest(reason);

/** Validates a selector and compiles its patterns; throws a 400 CouchError naming the first problem. */
export function parseSelector(value: unknown): Selector {
  if (!isObject(value as Json)) throw invalid('Selector error: expected a JSON object');
  checkSize(value as JsonObject);
  const regexes = new Map<string, SelectorRegex>();
  checkSelector(value as JsonObject, regexes);
  return { root: value as JsonObject, regexes };
}

/** Refuses selectors over `MAX_SELECTOR_NODES` values or `MAX_SELECTOR_DEPTH` levels (iteratively: no deep recursion). */
function checkSize(selector: JsonObject): void {
  const pending: [Json, number][] = [[selector, 1]];
  let nodes = 0;
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (++nodes > MAX_SELECTOR_NODES) throw invalid(`Invalid selector: more than ${MAX_SELECTOR_NODES} values`);
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_SELECTOR_DEPTH) throw invalid(`Invalid selector: nested deeper than ${MAX_SELECTOR_DEPTH} levels`);
    for (const child of Array.isArray(value) ? value : Object.values(value)) pending.push([child, depth + 1]);
  }
}

type Regexes = ReadonlyMap<string, SelectorRegex>;

function checkSelector(selector: JsonObject, regexes: Map<string, SelectorRegex>): void {
  for (const [key, value] of Object.entries(selector)) {
    if (COMBINATION_OPERATORS.has(key)) {
      if (!Array.isArray(value)) throw invalid(`Invalid selector: ${key} requires an array argument`);
      for (const item of value) {
        if (!isObject(item)) throw invalid(`Invalid selector: ${key} requires an array of objects`);
        checkSelector(item, regexes);
      }
    } else if (key === '$not') {
      if (!isObject(value)) throw invalid('Invalid selector: $not requires an object argument');
      checkSelector(value, regexes);
    } else if (key.startsWith('$')) {
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value, regexes);
    } else if (isObject(value)) {
      checkFieldValue(value, regexes);
    }
  }
}

/** A field's value: an operator object, a nested selector, or (anything else) an implied `$eq`. */
function checkFieldValue(value: JsonObject, regexes: Map<string, SelectorRegex>): void {
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
    for (const key of keys) {
      if (COMBINATION_OPERATORS.has(key)) {
        checkSelector({ [key]: value[key] } as JsonObject, regexes);
        continue;
      }
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value[key], regexes);
    }
  } else {
    checkSelector(value, regexes);
  }
}

function checkCondition(operator: string, argument: Json | undefined, regexes: Map<string, SelectorRegex>): void {
  switch (operator) {
    case '$in':
    case '$nin':
    case '$all':
      if (!Array.isArray(argument)) throw invalid(`Invalid selector: ${operator} requires an array argument`);
      return;
    case '$exists':
      if (typeof argument !== 'boolean') throw invalid('Invalid selector: $exists requires a boolean argument');
      return;
    case '$type':
      if (typeof argument !== 'string' || !TYPES.has(argument)) throw invalid(`Invalid selector: invalid type for $type: ${JSON.stringify(argument)}`);
      return;
    case '$size':
      if (typeof argument !== 'number' || !Number.isInteger(argument) || argument < 0) throw invalid('Invalid selector: $size requires a non-negative integer');
      return;
    case '$mod':
      if (!Array.isArray(argument) || argument.length !== 2 || !argument.every((n) => typeof n === 'number' && Number.isInteger(n)) || argument[0] === 0) {
        throw invalid('Invalid selector: $mod requires [Divisor, Remainder] with a non-zero integer divisor');
      }
      return;
    case '$regex':
      if (typeof argument !== 'string') throw invalid('Invalid selector: $regex requires a string argument');
      if (!regexes.has(argument)) regexes.set(argument, compileRegex(argument));
      return;
    case '$beginsWith':
      if (typeof argument !== 'string') throw invalid('Invalid selector: $beginsWith requires a string argument');
      return;
    case '$elemMatch':
    case '$allMatch':
    case '$keyMapMatch':
    case '$not':
      if (!isObject(argument)) throw invalid(`Invalid selector: ${operator} requires an object argument`);
      checkFieldValue(argument, regexes);
      return;
    default:
      return;
  }
}

/** CouchDB's rank of JSON types. */
function rank(value: Json): number {
  if (value === null) return 0;
  if (value === false) return 1;
  if (value === true) return 2;
  if (typeof value === 'number') return 3;
  if (typeof value === 'string') return 4;
  return Array.isArray(value) ? 5 : 6;
}

/** Compares two JSON values in CouchDB's collation (strings by code point). */
export function compareJson(a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') {
    const sb = b as string;
    return a < sb ? -1 : a > sb ? 1 : 0;
  }
  if (Array.isArray(a)) {
    const other = b as Json[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const order = compareJson(a[i]!, other[i]!);
      if (order !== 0) return order;
    }
    return a.length - other.length;
  }
  if (isObject(a)) {
    const ea = Object.entries(a);
    const eb = Object.entries(b as JsonObject);
    for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
      const [ka, va] = ea[i]!;
      const [kb, vb] = eb[i]!;
      if (ka !== kb) return ka < kb ? -1 : 1;
      const order = compareJson(va, vb);
      if (order !== 0) return order;
    }
    return ea.length - eb.length;
  }
  return 0;
}

function equal(a: Json, b: Json): boolean {
  if (rank(a) !== rank(b)) return false;
  if (isObject(a)) {
    const other = b as JsonObject;
    const keys = Object.keys(a);
    return keys.length === Object.keys(other).length && keys.every((key) => Object.hasOwn(other, key) && equal(a[key]!, other[key]!));
  }
  return compareJson(a, b) === 0;
}

/** A dotted field path (`a.b`, `a\.b` for a literal dot). */
function fieldPath(field: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < field.length; i++) {
    const char = field[i]!;
    if (char === '\\' && field[i + 1] === '.') {
      current += '.';
      i++;
    } else if (char === '.') {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

function lookup(value: Json | undefined, path: readonly string[]): Json | undefined {
  let current = value;
  for (const part of path) {
    if (!isObject(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

/** True when `doc` (a full JSON document, `_id`/`_rev` included) matches the selector. */
export function matchesSelector(selector: Selector, doc: JsonObject): boolean {
  return matchObject(selector.regexes, selector.root, doc);
}

function matchObject(regexes: Regexes, selector: JsonObject, value: Json | undefined): boolean {
  for (const [key, argument] of Object.entries(selector)) {
    if (!matchEntry(regexes, key, argument, value)) return false;
  }
  return true;
}

function matchEntry(regexes: Regexes, key: string, argument: Json, value: Json | undefined): boolean {
  switch (key) {
    case '$and':
      return (argument as JsonObject[]).every((item) => matchObject(regexes, item, value));
    case '$or':
      return (argument as JsonObject[]).some((item) => matchObject(regexes, item, value));
    case '$nor':
      return !(argument as JsonObject[]).some((item) => matchObject(regexes, item, value));
    case '$not':
      return !matchObject(regexes, argument as JsonObject, value);
    default:
      if (key.startsWith('$')) return matchCondition(regexes, key, argument, value);
      return matchField(regexes, argument, lookup(value, fieldPath(key)));
  }
}

/** The value of a field against what the selector says about it. */
function matchField(regexes: Regexes, argument: Json, value: Json | undefined): boolean {
  if (isObject(argument)) {
    const keys = Object.keys(argument);
    if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
      return keys.every((key) => matchEntry(regexes, key, argument[key]!, value));
    }
    if (keys.length === 0) return value !== undefined && isObject(value) && Object.keys(value).length === 0;
    return matchObject(regexes, argument, value);
  }
  return value !== undefined && equal(value, argument);
}

function matchCondition(regexes: Regexes, operator: string, argument: Json, value: Json | undefined): boolean {
  switch (operator) {
    case '$exists':
      return (value !== undefined) === argument;
    case '$ne':
      return value === undefined || !equal(value, argument);
    case '$nin':
      return value === undefined || !(argument as Json[]).some((item) => equal(value, item));
    default:
      break;
  }
  if (value === undefined) return false;
  switch (operator) {
    case '$eq':
      return equal(value, argument);
    case '$gt':
      return compareJson(value, argument) > 0;
    case '$gte':
      return compareJson(value, argument) >= 0;
    case '$lt':
      return compareJson(value, argument) < 0;
    case '$lte':
      return compareJson(value, argument) <= 0;
    case '$in':
      return (argument as Json[]).some((item) => (Array.isArray(value) ? value.some((v) => equal(v, item)) : equal(value, item)));
    case '$type':
      return typeName(value) === argument;
    case '$size':
      return Array.isArray(value) && value.length === argument;
    case '$mod': {
      const [divisor, remainder] = argument as [number, number];
      return typeof value === 'number' && Number.isInteger(value) && value % divisor === remainder;
    }
    case '$regex':
      return typeof value === 'string' && regexes.get(argument as string)!.test(value);
    case '$beginsWith':
      return typeof value === 'string' && value.startsWith(argument as string);
    case '$all':
      return Array.isArray(value) && (argument as Json[]).every((item) => value.some((v) => equal(v, item)));
    case '$elemMatch':
      return Array.isArray(value) && value.some((item) => matchField(regexes, argument, item));
    case '$allMatch':
      return Array.isArray(value) && value.length > 0 && value.every((item) => matchField(regexes, argument, item));
    case '$keyMapMatch':
      return isObject(value) && Object.keys(value).some((key) => matchField(regexes, argument, key));
    default:
      return false;
  }
}

function typeName(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
