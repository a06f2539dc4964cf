/**
 * The options of a view query, read as CouchDB's `couch_mrview_http:parse_params` reads them (from
 * the query string, or decoded from a POST body) and checked as `couch_mrview_util:validate_args`
 * checks them, with the same `query_parse_error` texts.
 */
import { queryParseError } from '../errors/query-errors.js';
import type { Json } from '../json/json.js';

export interface ViewArgs {
  /** The partition a partitioned view is read in (`partition`, checked by the route). */
  partition?: string;
  keys?: Json[];
  startKey?: Json;
  endKey?: Json;
  startDocId?: string;
  endDocId?: string;
  inclusiveEnd: boolean;
  descending: boolean;
  limit?: number;
  skip: number;
  reduce?: boolean;
  group?: boolean;
  groupLevel?: number;
  includeDocs: boolean;
  conflicts?: boolean;
  /** With `include_docs`: the documents' attachments with their data inline. */
  attachments?: boolean;
  /** `att_encoding_info`: included documents' stubs keep `encoding` and `encoded_length`. */
  attEncodingInfo?: boolean;
  update: 'true' | 'false' | 'lazy';
  stable: boolean;
  updateSeq: boolean;
  sorted: boolean;
}

/** One parameter: a query-string text, or (from a POST body) an already decoded JSON value. */
export interface Param {
  name: string;
  value: Json;
  decoded: boolean;
}

export const defaultArgs = (): ViewArgs => ({ inclusiveEnd: true, descending: false, skip: 0, includeDocs: false, update: 'true', stable: false, updateSeq: false, sorted: true });

const show = (value: Json): string => JSON.stringify(value);

function boolean(value: Json): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && value.toLowerCase() === 'true') return true;
  if (typeof value === 'string' && value.toLowerCase() === 'false') return false;
  throw queryParseError(`Invalid boolean parameter: ${show(value)}`);
}

function positiveInteger(value: Json): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number)) throw queryParseError(`Invalid value for integer: ${show(value)}`);
  if (number < 0) throw queryParseError(`Invalid value for positive integer: ${show(value)}`);
  return Math.min(number, Number.MAX_SAFE_INTEGER);
}

const text = (value: Json): string => (typeof value === 'string' ? value : JSON.stringify(value));

function choice<T extends string>(value: Json, allowed: readonly T[], what: string): T {
  const found = allowed.find((option) => option === text(value));
  if (found === undefined) throw queryParseError(`Invalid value for \`${what}\`.`);
  return found;
}

type Setter = (args: ViewArgs, value: Json, json: (value: Json) => Json) => void;

const SETTERS: Record<string, Setter> = {
  reduce: (args, value) => (args.reduce = boolean(value)),
  key: (args, value, json) => (args.startKey = args.endKey = json(value)),
  keys: (args, value, json) => {
    const keys = json(value);
    if (Array.isArray(keys) && keys.length === 1) args.startKey = args.endKey = keys[0]!;
    else args.keys = keys as Json[];
  },
  startkey: (args, value, json) => (args.startKey = json(value)),
  endkey: (args, value, json) => (args.endKey = json(value)),
  startkey_docid: (args, value) => (args.startDocId = text(value)),
  endkey_docid: (args, value) => (args.endDocId = text(value)),
  limit: (args, value) => (args.limit = positiveInteger(value)),
  skip: (args, value) => (args.skip = positiveInteger(value)),
  stale: (args, value) => {
    const stale = choice(value, ['ok', 'update_after'], 'stale');
    args.stable = true;
    args.update = stale === 'ok' ? 'false' : 'lazy';
  },
  stable: (args, value) => (args.stable = choice(value, ['true', 'false'], 'stable') === 'true'),
  update: (args, value) => (args.update = choice(value, ['true', 'false', 'lazy'], 'update')),
  descending: (args, value) => (args.descending = boolean(value)),
  group: (args, value) => (args.group = boolean(value)),
  group_level: (args, value) => (args.groupLevel = positiveInteger(value)),
  inclusive_end: (args, value) => (args.inclusiveEnd = boolean(value)),
  include_docs: (args, value) => (args.includeDocs = boolean(value)),
  update_seq: (args, value) => (args.updateSeq = boolean(value)),
  conflicts: (args, value) => (args.conflicts = boolean(value)),
  sorted: (args, value) => (args.sorted = boolean(value)),
  attachments: (args, value) => (args.attachments = boolean(value)),
  att_encoding_info: (args, value) => (args.attEncodingInfo = boolean(value)),
};
SETTERS['start_key'] = SETTERS['startkey']!;
SETTERS['end_key'] = SETTERS['endkey']!;
SETTERS['start_key_doc_id'] = SETTERS['startkey_docid']!;
SETTERS['end_key_doc_id'] = SETTERS['endkey_docid']!;

/** Applies parameters in order to `args` (unknown ones are ignored, as CouchDB keeps them aside). */
export function applyParams(args: ViewArgs, params: readonly Param[], decode: (text: string) => Json): ViewArgs {
  for (const param of params) {
    const setter = Object.hasOwn(SETTERS, param.name) ? SETTERS[param.name] : undefined;
    setter?.(args, param.value, (value) => (param.decoded ? value : decode(value as string)));
  }
  return args;
}
