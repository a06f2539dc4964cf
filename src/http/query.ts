import { badRequest, etagRevisionDiffers } from '../errors/catalog.js';
import type { Config } from '../config/config.js';
import { invalidBooleanParameter, invalidPositiveInteger, tooManyKeys } from '../errors/query-errors.js';
import type { Json } from '../storage/storage.js';
import { parseJsonText, type Request } from './request.js';

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

/** The revision a write names: `?rev=` or `If-Match`, which must agree. */
export function revisionFrom(request: Request): string | undefined {
  const fromQuery = request.query.get('rev') ?? undefined;
  const ifMatch = request.header('if-match')?.replace(/^"|"$/g, '');
  if (fromQuery !== undefined && ifMatch !== undefined && fromQuery !== ifMatch) throw etagRevisionDiffers();
  return fromQuery ?? ifMatch;
}

/** Refuses a request naming more than `[couchdb] max_keys_count` keys (400): its rows are read and sent one by one. */
export function checkKeyCount(count: number, config: Config): void {
  const max = config.getInteger('couchdb', 'max_keys_count');
  if (count > max) throw tooManyKeys(max);
}
