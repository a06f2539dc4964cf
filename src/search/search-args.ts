/**
 * The options of a `_nouveau` query, from a GET query string (text, JSON where CouchDB decodes it)
 * or a POST body (JSON), checked as CouchDB's `nouveau_httpd:validate_query_args`: `q` (mandatory),
 * `limit` (default 25), `sort`, `bookmark`, `include_docs`, `counts`, `ranges`, `top_n`
 * (default 10), `update`. A bad value is 400 `query_parse_error`.
 */
import { queryParseError } from '../errors/query-errors.js';
import type { Json, JsonObject } from '../json/json.js';
import type { RangeFacet } from '../storage/storage.js';

export interface SearchArgs {
  q: string;
  limit: number;
  sort?: string[];
  bookmark?: string;
  includeDocs: boolean;
  counts?: string[];
  ranges?: Record<string, RangeFacet[]>;
  topN: number;
  update: boolean;
}

/** A parameter as sent: query-string text, or a POST body's JSON value. */
type Raw = { text: string } | { json: Json } | undefined;

function jsonOf(raw: Raw, name: string): Json | undefined {
  if (raw === undefined) return undefined;
  if ('json' in raw) return raw.json;
  try {
    return JSON.parse(raw.text) as Json;
  } catch {
    throw queryParseError(`Invalid value for ${name}: ${JSON.stringify(raw.text)}`);
  }
}

function positive(raw: Raw, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = 'json' in raw ? raw.json : /^-?\d+$/.test(raw.text) ? Number(raw.text) : NaN;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw queryParseError(`${name} parameter must be an integer`);
  if (value <= 0) throw queryParseError(`${name} parameter must be greater than zero`);
  return value;
}

function boolean(raw: Raw, name: string, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  const value = 'json' in raw ? raw.json : raw.text === 'true' ? true : raw.text === 'false' ? false : raw.text;
  if (typeof value !== 'boolean') throw queryParseError(`Invalid value for ${name}: ${JSON.stringify(value)}`);
  return value;
}

function strings(value: Json | undefined, name: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && name === 'sort') return [value];
  if (!Array.isArray(value)) throw queryParseError(`${name} parameter must be a list of strings`);
  if (!value.every((item) => typeof item === 'string')) throw queryParseError(`all items in ${name} parameter must be strings`);
  return value as string[];
}

function bound(range: JsonObject, name: string): number | undefined {
  const value = range[name];
  if (value === undefined || value === null) return undefined;
  const parsed = typeof value === 'string' ? Number(value) : value;
  if (typeof parsed !== 'number' || Number.isNaN(parsed)) throw queryParseError(`range ${name} must be a number`);
  return parsed;
}

function ranges(value: Json | undefined): Record<string, RangeFacet[]> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw queryParseError('ranges parameter must be an object');
  const result: Record<string, RangeFacet[]> = {};
  for (const [field, list] of Object.entries(value)) {
    if (!Array.isArray(list)) throw queryParseError('range values must be lists of objects');
    result[field] = list.map((range) => {
      if (range === null || typeof range !== 'object' || Array.isArray(range)) throw queryParseError('all values in ranges parameter must be objects');
      if (typeof range['label'] !== 'string') throw queryParseError('each range must have a string label');
      const min = bound(range, 'min');
      const max = bound(range, 'max');
      return { label: range['label'], ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }), minInclusive: range['min_inclusive'] !== false, maxInclusive: range['max_inclusive'] !== false };
    });
  }
  return result;
}

/** The query's options; `raw(name)` gives each parameter as sent. */
export function searchArgsOf(raw: (name: string) => Raw): SearchArgs {
  const q = raw('q');
  if (q === undefined) throw queryParseError('q parameter is mandatory');
  const text = 'json' in q ? q.json : q.text;
  if (typeof text !== 'string') throw queryParseError('q parameter must be a string');
  const bookmark = raw('bookmark');
  const bookmarkText = bookmark === undefined ? undefined : 'json' in bookmark ? bookmark.json : bookmark.text;
  if (bookmarkText !== undefined && bookmarkText !== null && typeof bookmarkText !== 'string') throw queryParseError('bookmark parameter must be a string');
  const sort = strings(jsonOf(raw('sort'), 'sort'), 'sort');
  const counts = strings(jsonOf(raw('counts'), 'counts'), 'counts');
  const rangeFacets = ranges(jsonOf(raw('ranges'), 'ranges'));
  return {
    q: text,
    limit: positive(raw('limit'), 'limit', 25),
    ...(sort === undefined ? {} : { sort }),
    ...(typeof bookmarkText === 'string' ? { bookmark: bookmarkText } : {}),
    includeDocs: boolean(raw('include_docs'), 'include_docs', false),
    ...(counts === undefined ? {} : { counts }),
    ...(rangeFacets === undefined ? {} : { ranges: rangeFacets }),
    topN: positive(raw('top_n'), 'top_n', 10),
    update: boolean(raw('update'), 'update', true),
  };
}
