import { CouchError } from '../errors/couch-error.js';
import { invalidJson } from '../errors/catalog.js';
import type { Json } from '../storage/storage.js';

/** Query-string readers with CouchDB's `query_parse_error` answers. */

const queryParseError = (reason: string): CouchError => new CouchError(400, 'query_parse_error', reason);

export function booleanParam(query: URLSearchParams, name: string, fallback = false): boolean {
  const value = query.get(name);
  if (value === null) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw queryParseError(`Invalid boolean parameter: ${JSON.stringify(value)}`);
}

export function nonNegativeIntegerParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^\d+$/.test(value)) throw queryParseError(`Invalid value for positive integer: ${JSON.stringify(value)}`);
  return Number(value);
}

export function jsonParam(query: URLSearchParams, ...names: string[]): Json | undefined {
  for (const name of names) {
    const value = query.get(name);
    if (value === null) continue;
    try {
      return JSON.parse(value) as Json;
    } catch {
      throw invalidJson();
    }
  }
  return undefined;
}
