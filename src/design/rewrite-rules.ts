/**
 * The rules form of `rewrites` (chttpd_rewrite.erl): an array of `{from, to, method, query,
 * formats}`. The first rule whose method and `from` match the path after `_rewrite` gives the new
 * path: `:name` in `from` binds one segment, a final `*` the rest; `to` uses the bindings and the
 * rest; the rule's `query` values (`:name`, `*`) are filled from the bindings and the request's
 * query. As CouchDB, every binding also goes into the new query string (`key`-like values as JSON).
 */
import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from './function-types/function-type.js';

/** A part of `from` or `to`: a literal segment, a `:name` binding, or `*`. */
type Part = { literal: string } | { bind: string };
const ALL = '*';

interface Rule {
  readonly from: Part[];
  readonly to: Part[];
  /** `*` for any method. */
  readonly method: string;
  readonly query: [string, Json][];
  readonly formats: JsonObject;
}

/** Query members CouchDB reads and writes as JSON (chttpd_rewrite maybe_json, decode_query_value). */
const JSON_KEYS = new Set(['key', 'startkey', 'start_key', 'endkey', 'end_key', 'keys']);

type Bindings = [string, Json][];

/** `from` or `to` as parts; a third `..` in a row of them is refused while `secure` (`[chttpd] secure_rewrites`). */
function parsePath(path: string, secure: boolean): Part[] {
  const parts: Part[] = [];
  let dotDots = 0;
  for (const segment of path.split('/')) {
    if (segment === '') continue;
    if (segment === '..') {
      if (dotDots === 2 && secure) throw new CouchError(500, 'insecure_rewrite_rule', 'too many ../.. segments');
      dotDots++;
    }
    parts.push(segment === ALL ? { bind: ALL } : segment.startsWith(':') ? { bind: segment.slice(1) } : { literal: segment });
  }
  return parts;
}

function ruleOf(rule: JsonObject, secure: boolean): Rule {
  if (typeof rule['to'] !== 'string') throw new CouchError(500, 'error', 'invalid_rewrite_target');
  return {
    from: typeof rule['from'] === 'string' ? parsePath(rule['from'], secure) : [{ bind: ALL }],
    to: parsePath(rule['to'], secure),
    method: typeof rule['method'] === 'string' ? rule['method'] : ALL,
    query: isObject(rule['query']) ? Object.entries(rule['query']) : [],
    formats: isObject(rule['formats']) ? rule['formats'] : {},
  };
}

/** Binds `from` to the path: the bindings and the segments `*` took, or undefined. */
function bindPath(from: readonly Part[], path: readonly string[]): { rest: string[]; bindings: Bindings } | undefined {
  const bindings: Bindings = [];
  for (let at = 0; ; at++) {
    const part = from[at];
    if (part === undefined) return at === path.length ? { rest: [], bindings } : undefined;
    if ('bind' in part && part.bind === ALL && at === from.length - 1) return { rest: path.slice(at), bindings };
    const segment = path[at];
    if (segment === undefined) return undefined;
    if ('bind' in part) bindings.unshift([part.bind, segment]);
    else if (part.literal !== segment) return undefined;
  }
}

const lookup = (bindings: Bindings, name: string): Json | undefined => bindings.find(([key]) => key === name)?.[1];

function formatted(name: string, value: Json, formats: JsonObject): Json {
  const format = formats[name];
  if (format === 'int' && typeof value === 'string' && /^[+-]?\d+$/.test(value)) return Number.parseInt(value, 10);
  if (format === 'bool' && typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase())) return value.toLowerCase() === 'true';
  return value;
}

/** A rule's query value with `:name` and `*` replaced from the bindings (replace_var). */
function replaced(value: Json, bindings: Bindings, formats: JsonObject): Json {
  const one = (text: string): Json => {
    const name = text === ALL ? ALL : text.startsWith(':') ? text.slice(1) : undefined;
    return name === undefined ? text : formatted(name, lookup(bindings, name) ?? text, formats);
  };
  if (typeof value === 'string') return one(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' && item.startsWith(':') ? one(item) : item));
  return value;
}

/** mochiweb_util:quote_plus: letters, digits and `.-~_` stay, a space is `+`, the rest is `%XX`. */
export function quotePlus(text: string): string {
  return Array.from(Buffer.from(text, 'utf8'), (byte) => {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9.\-~_]/.test(char)) return char;
    return byte === 0x20 ? '+' : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

const queryText = (name: string, value: Json): string =>
  JSON_KEYS.has(name) || typeof value !== 'string' ? JSON.stringify(value) : value;

/**
 * The new path and query (relative to the design document) of the first rule that matches, or
 * undefined when none does. `query` is the request's query, its `key`-like members read as JSON.
 */
export function applyRules(rules: readonly Json[], method: string, path: readonly string[], query: URLSearchParams, secure: boolean): string | undefined {
  const parsed = rules.filter(isObject).map((rule) => ruleOf(rule, secure));
  const queryList: Bindings = [...query.entries()].map(([name, value]) => {
    if (!JSON_KEYS.has(name)) return [name, value];
    try {
      return [name, JSON.parse(value) as Json];
    } catch {
      throw new CouchError(400, 'bad_request', `invalid JSON in query parameter ${name}`);
    }
  });
  for (const rule of parsed) {
    if (rule.method !== ALL && rule.method !== method) continue;
    const bound = bindPath(rule.from, path);
    if (bound === undefined) continue;
    const all = [...bound.bindings, ...queryList];
    const ruleQuery: Bindings = rule.query.map(([name, value]) => [name, replaced(value, all, rule.formats)] as [string, Json]).reverse();
    const final: Bindings = [...all.filter(([name]) => lookup(ruleQuery, name) === undefined), ...ruleQuery];
    const parts: string[] = [];
    for (const part of rule.to) {
      if ('bind' in part && part.bind === ALL) {
        parts.push(...bound.rest);
        break;
      }
      parts.push('literal' in part ? part.literal : String(lookup(final, part.bind) ?? 'undefined'));
    }
    const search = final.filter(([name]) => name !== ALL).reverse().map(([name, value]) => `${quotePlus(name)}=${quotePlus(queryText(name, value))}`);
    return parts.map((part) => quotePlus(part)).join('/') + (search.length > 0 ? `?${search.join('&')}` : '');
  }
  return undefined;
}

/** chttpd_rewrite:normalize_path: empty and `.` segments go, `..` takes the segment before it (kept at the root). */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}
