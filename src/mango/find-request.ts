/**
 * The body of `POST /{db}/_find` and `_explain` checked as CouchDB's `mango_opts:validate_find`
 * checks it: unknown keys, a missing selector and malformed options are 400s with its error names.
 */
import { isObject } from '../documents/document-json.js';
import { parseSelector, type Selector } from '../documents/selector.js';
import { isCouchError } from '../errors/couch-error.js';
import {
  badArgument,
  invalidBoolean,
  invalidFields,
  invalidKey,
  invalidOperator,
  invalidSelectorJson,
  invalidValue,
  missingRequiredKey,
  notInteger,
  notPositiveInteger,
} from '../errors/mango-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import { parseSort, type SortField } from './sort.js';
import { validatePartition } from '../databases/partitions.js';

/** CouchDB's default `limit` of `_find`. */
const DEFAULT_LIMIT = 25;

export interface FindRequest {
  selector: Selector;
  fields: string[] | undefined;
  sort: SortField[];
  limit: number;
  skip: number;
  bookmark: string | undefined;
  /** `[ddoc]` or `[ddoc, name]`, ddoc without `_design/`; empty when not given. */
  useIndex: string[];
  r: number;
  conflicts: boolean;
  update: boolean;
  stable: boolean;
  stale: 'ok' | false;
  executionStats: boolean;
  allowFallback: boolean;
  /** The partition a query of a partitioned database reads (`partition`, or `/{db}/_partition/{p}/_find`). */
  partition: string | undefined;
}

const KEYS = new Set(['selector', 'use_index', 'bookmark', 'limit', 'skip', 'sort', 'fields', 'partition', 'r', 'conflicts', 'stale', 'update', 'stable', 'execution_stats', 'allow_fallback']);

function boolean(body: JsonObject, key: string, fallback: boolean): boolean {
  const value = body[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalidBoolean(value);
  return value;
}

function nonNegative(body: JsonObject, key: string, fallback: number): number {
  const value = body[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw notInteger(value);
  return value;
}

/** The selector, with the selector module's refusals renamed as CouchDB's `mango_selector` names them. */
export function mangoSelector(value: Json | undefined): Selector {
  if (!isObject(value)) throw invalidSelectorJson(value ?? null);
  try {
    return parseSelector(value);
  } catch (error) {
    if (!isCouchError(error) || error.error !== 'bad_request') throw error;
    const operator = /^Invalid operator: (.*)$/.exec(error.reason);
    if (operator) throw invalidOperator(operator[1]!);
    const argument = /^(?:Invalid selector: |Bad argument for operator )(\$\w+)[: ]\s*(.*)$/.exec(error.reason);
    if (argument) throw badArgument(argument[1]!, argument[2]!);
    throw error;
  }
}

function useIndexOf(value: Json | undefined): string[] {
  const strip = (name: string): string => (name.startsWith('_design/') ? name.slice('_design/'.length) : name);
  if (value === undefined) return [];
  if (typeof value === 'string') return value === '' ? [] : [strip(value)];
  if (Array.isArray(value) && value.length <= 2 && value.every((item) => typeof item === 'string')) {
    return value.length === 0 ? [] : [strip(value[0] as string), ...(value.slice(1) as string[])];
  }
  throw invalidValue('use_index', value);
}

function fieldsOf(value: Json | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw invalidFields(value);
  return value.length === 0 ? undefined : (value as string[]);
}

/** Checks a `_find`/`_explain` body; throws CouchDB's 400 for the first problem. */
export function parseFindRequest(body: JsonObject): FindRequest {
  for (const key of Object.keys(body)) if (!KEYS.has(key)) throw invalidKey(key);
  if (!('selector' in body)) throw missingRequiredKey('selector');
  const selector = mangoSelector(body['selector']);
  const bookmark = body['bookmark'];
  if (bookmark !== undefined && typeof bookmark !== 'string') throw invalidValue('bookmark', bookmark);
  const r = body['r'] ?? 1;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1) throw notPositiveInteger(r);
  const stale = body['stale'] ?? false;
  if (stale !== 'ok' && stale !== false) throw invalidValue('stale', stale);
  const partition = body['partition'];
  if (partition !== undefined && typeof partition !== 'string') throw invalidValue('partition', partition);
  if (partition) validatePartition(partition);
  return {
    selector,
    fields: fieldsOf(body['fields']),
    sort: parseSort(body['sort']),
    limit: nonNegative(body, 'limit', DEFAULT_LIMIT),
    skip: nonNegative(body, 'skip', 0),
    bookmark: bookmark === undefined || bookmark === '' || bookmark === 'nil' ? undefined : bookmark,
    useIndex: useIndexOf(body['use_index']),
    r,
    conflicts: boolean(body, 'conflicts', false),
    update: stale === 'ok' ? false : boolean(body, 'update', true),
    stable: stale === 'ok' ? true : boolean(body, 'stable', false),
    stale,
    executionStats: boolean(body, 'execution_stats', false),
    allowFallback: boolean(body, 'allow_fallback', true),
    partition: partition ? partition : undefined,
  };
}
