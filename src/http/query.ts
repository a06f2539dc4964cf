import { badRequest } from '../errors/catalog.js';
import { invalidBooleanParameter, invalidPositiveInteger } from '../errors/query-errors.js';
import type { Json } from '../storage/storage.js';
import { parseJsonText } from './request.js';

/** Query-string readers with CouchDB's `query_parse_error` answers. */

export function booleanParam(query: URLSearchParams, name: string, fallback = false): boolean {
  const value = query.get(name);
  if (value === null) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalidBooleanParameter(value);
}

export function nonNegativeIntegerParam(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^\d+$/.test(value)) throw invalidPositiveInteger(value);
  // Beyond 2^53 a count means "all of them"; an inexact float would reach SQL as a REAL (500).
  return Math.min(Number(value), Number.MAX_SAFE_INTEGER);
}

export function jsonParam(query: URLSearchParams, ...names: string[]): Json | undefined {
  for (const name of names) {
    const value = query.get(name);
    if (value === null) continue;
    return parseJsonText(value) as Json;
  }
  return undefined;
}

/** `?attachments=true` and `atts_since=[…]` (which implies it, as in CouchDB): undefined when neither. */
export function attachmentsParam(query: URLSearchParams): { since?: string[] } | undefined {
  const since = query.get('atts_since');
  if (since !== null) {
    const revs = parseJsonText(since);
    if (!Array.isArray(revs) || !revs.every((rev) => typeof rev === 'string')) throw badRequest('atts_since must be a JSON array of revisions');
    return { since: revs as string[] };
  }
  return booleanParam(query, 'attachments') ? {} : undefined;
}
