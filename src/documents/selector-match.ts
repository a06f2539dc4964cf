/**
 * Matching one document against a selector that `parseSelector` has checked: operators and their
 * arguments are trusted here, and `$regex` patterns come compiled.
 */
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';
import { compareJson, equal } from './selector-collation.js';
import type { SelectorRegex } from './selector-regex.js';

type Regexes = ReadonlyMap<string, SelectorRegex>;

/** A dotted field path (`a.b`, `a\.b` for a literal dot). */
export function fieldPath(field: string): string[] {
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

export function lookup(value: Json | undefined, path: readonly string[]): Json | undefined {
  let current = value;
  for (const part of path) {
    if (!isObject(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

export function matchObject(regexes: Regexes, selector: JsonObject, value: Json | undefined): boolean {
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
