/**
 * Mango selectors (CouchDB's `mango_selector`) as the `_selector` filter of `_changes` uses them:
 * `parseSelector` checks a selector once (unknown operators and malformed arguments are 400s, as
 * CouchDB's normalisation answers), `matchesSelector` tests a document against it.
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

export type Selector = JsonObject;

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

/** Validates a selector; throws a 400 CouchError naming the first problem. */
export function parseSelector(value: unknown): Selector {
  if (!isObject(value as Json)) throw invalid('Selector error: expected a JSON object');
  checkSelector(value as JsonObject);
  return value as Selector;
}

function checkSelector(selector: JsonObject): void {
  for (const [key, value] of Object.entries(selector)) {
    if (COMBINATION_OPERATORS.has(key)) {
      if (!Array.isArray(value)) throw invalid(`Invalid selector: ${key} requires an array argument`);
      for (const item of value) {
        if (!isObject(item)) throw invalid(`Invalid selector: ${key} requires an array of objects`);
        checkSelector(item);
      }
    } else if (key === '$not') {
      if (!isObject(value)) throw invalid('Invalid selector: $not requires an object argument');
      checkSelector(value);
    } else if (key.startsWith('$')) {
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value);
    } else if (isObject(value)) {
      checkFieldValue(value);
    }
  }
}

/** A field's value: an operator object, a nested selector, or (anything else) an implied `$eq`. */
function checkFieldValue(value: JsonObject): void {
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
    for (const key of keys) {
      if (COMBINATION_OPERATORS.has(key)) {
        checkSelector({ [key]: value[key] } as JsonObject);
        continue;
      }
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value[key]);
    }
  } else {
    checkSelector(value);
  }
}

function checkCondition(operator: string, argument: Json | undefined): void {
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
      try {
        new RegExp(argument, 'u');
      } catch {
        throw invalid(`Invalid selector: invalid regular expression ${JSON.stringify(argument)}`);
      }
      return;
    case '$beginsWith':
      if (typeof argument !== 'string') throw invalid('Invalid selector: $beginsWith requires a string argument');
      return;
    case '$elemMatch':
    case '$allMatch':
    case '$keyMapMatch':
    case '$not':
      if (!isObject(argument)) throw invalid(`Invalid selector: ${operator} requires an object argument`);
      checkFieldValue(argument);
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
  return matchObject(selector, doc);
}

function matchObject(selector: JsonObject, value: Json | undefined): boolean {
  for (const [key, argument] of Object.entries(selector)) {
    if (!matchEntry(key, argument, value)) return false;
  }
  return true;
}

function matchEntry(key: string, argument: Json, value: Json | undefined): boolean {
  switch (key) {
    case '$and':
      return (argument as JsonObject[]).every((item) => matchObject(item, value));
    case '$or':
      return (argument as JsonObject[]).some((item) => matchObject(item, value));
    case '$nor':
      return !(argument as JsonObject[]).some((item) => matchObject(item, value));
    case '$not':
      return !matchObject(argument as JsonObject, value);
    default:
      if (key.startsWith('$')) return matchCondition(key, argument, value);
      return matchField(argument, lookup(value, fieldPath(key)));
  }
}

/** The value of a field against what the selector says about it. */
function matchField(argument: Json, value: Json | undefined): boolean {
  if (isObject(argument)) {
    const keys = Object.keys(argument);
    if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
      return keys.every((key) => matchEntry(key, argument[key]!, value));
    }
    if (keys.length === 0) return value !== undefined && isObject(value) && Object.keys(value).length === 0;
    return matchObject(argument, value);
  }
  return value !== undefined && equal(value, argument);
}

function matchCondition(operator: string, argument: Json, value: Json | undefined): boolean {
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
      return typeof value === 'string' && new RegExp(argument as string, 'u').test(value);
    case '$beginsWith':
      return typeof value === 'string' && value.startsWith(argument as string);
    case '$all':
      return Array.isArray(value) && (argument as Json[]).every((item) => value.some((v) => equal(v, item)));
    case '$elemMatch':
      return Array.isArray(value) && value.some((item) => matchField(argument, item));
    case '$allMatch':
      return Array.isArray(value) && value.length > 0 && value.every((item) => matchField(argument, item));
    case '$keyMapMatch':
      return isObject(value) && Object.keys(value).some((key) => matchField(argument, key));
    default:
      return false;
  }
}

function typeName(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
