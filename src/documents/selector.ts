/**
 * Mango selectors (CouchDB's `mango_selector`) as the `_selector` filter of `_changes` uses them:
 * `parseSelector` checks a selector once (unknown operators and malformed arguments are 400s, as
 * CouchDB's normalisation answers) and compiles its `$regex` patterns once, with RE2
 * (`selector-regex.ts`); `matchesSelector` tests a document against it.
 *
 * A selector's size is bounded (`MAX_SELECTOR_NODES` JSON values, `MAX_SELECTOR_DEPTH` levels), so
 * that matching one document stays short; callers matching many documents yield between them.
 *
 * Matching (`selector-match.ts`) compares values in CouchDB's collation of JSON types
 * (`selector-collation.ts`).
 *
 * @example
 * const selector = parseSelector({ type: 'note', year: { $gte: 2020 } })
 * matchesSelector(selector, { _id: 'a', type: 'note', year: 2024 }) // true
 */
import { badRequest } from '../errors/catalog.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from './document-json.js';
import { fieldPath, matchObject, type Compiled } from './selector-match.js';
import { compileRegex, type SelectorRegex } from './selector-regex.js';
import { ValueSet } from './selector-values.js';

/** A checked selector, its `$regex` patterns and its `$in`/`$nin`/`$all` lists, each compiled once. */
export interface Selector extends Compiled {
  readonly root: JsonObject;
}

interface Compiling {
  regexes: Map<string, SelectorRegex>;
  sets: Map<Json[], ValueSet>;
  paths: Map<string, string[]>;
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
  '$text',
]);
const COMBINATION_OPERATORS = new Set(['$and', '$or', '$nor']);
const TYPES = new Set(['null', 'boolean', 'number', 'string', 'array', 'object']);

const invalid = (reason: string) => badRequest(reason);

/** Validates a selector and compiles its patterns; throws a 400 CouchError naming the first problem. */
export function parseSelector(value: unknown): Selector {
  if (!isObject(value as Json)) throw invalid('Selector error: expected a JSON object');
  checkSize(value as JsonObject);
  const compiled: Compiling = { regexes: new Map(), sets: new Map(), paths: new Map() };
  checkSelector(value as JsonObject, compiled);
  return { root: value as JsonObject, ...compiled };
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

function checkSelector(selector: JsonObject, compiled: Compiling): void {
  for (const [key, value] of Object.entries(selector)) {
    if (COMBINATION_OPERATORS.has(key)) {
      if (!Array.isArray(value)) throw invalid(`Invalid selector: ${key} requires an array argument`);
      for (const item of value) {
        if (!isObject(item)) throw invalid(`Invalid selector: ${key} requires an array of objects`);
        checkSelector(item, compiled);
      }
    } else if (key === '$not') {
      if (!isObject(value)) throw invalid('Invalid selector: $not requires an object argument');
      checkSelector(value, compiled);
    } else if (key.startsWith('$')) {
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value, compiled);
    } else {
      if (!compiled.paths.has(key)) compiled.paths.set(key, fieldPath(key));
      if (isObject(value)) checkFieldValue(value, compiled);
    }
  }
}

/** A field's value: an operator object, a nested selector, or (anything else) an implied `$eq`. */
function checkFieldValue(value: JsonObject, compiled: Compiling): void {
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => key.startsWith('$'))) {
    for (const key of keys) {
      if (COMBINATION_OPERATORS.has(key)) {
        checkSelector({ [key]: value[key] } as JsonObject, compiled);
        continue;
      }
      if (!CONDITION_OPERATORS.has(key)) throw invalid(`Invalid operator: ${key}`);
      checkCondition(key, value[key], compiled);
    }
  } else {
    checkSelector(value, compiled);
  }
}

function checkCondition(operator: string, argument: Json | undefined, compiled: Compiling): void {
  switch (operator) {
    case '$in':
    case '$nin':
    case '$all':
      if (!Array.isArray(argument)) throw invalid(`Invalid selector: ${operator} requires an array argument`);
      compiled.sets.set(argument, new ValueSet(argument));
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
      if (!compiled.regexes.has(argument)) compiled.regexes.set(argument, compileRegex(argument));
      return;
    case '$beginsWith':
      if (typeof argument !== 'string') throw invalid('Invalid selector: $beginsWith requires a string argument');
      return;
    case '$text':
      if (argument === null || typeof argument === 'object') throw invalid(`Bad argument for operator $text: ${JSON.stringify(argument)}`);
      return;
    case '$elemMatch':
    case '$allMatch':
    case '$keyMapMatch':
    case '$not':
      if (!isObject(argument)) throw invalid(`Invalid selector: ${operator} requires an object argument`);
      checkFieldValue(argument, compiled);
      return;
    default:
      return;
  }
}

/** True when `doc` (a full JSON document, `_id`/`_rev` included) matches the selector. */
export function matchesSelector(selector: Selector, doc: JsonObject): boolean {
  return matchObject(selector, selector.root, doc);
}
