import { DEFAULTS } from '../config/defaults.js';
/**
 * Parses `[chttpd] authentication_handlers`, written in CouchDB's Erlang tuple syntax:
 * `{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}`.
 */
interface HandlerSpec {
  module: string;
  function: string;
  /** `cookie`, `default`, `proxy`, `jwt`: the function name up to its first `_`. */
  name: string;
}

export const DEFAULT_AUTHENTICATION_HANDLERS: string = DEFAULTS.chttpd.authentication_handlers;

const KNOWN_MODULES = new Set(['chttpd_auth', 'couch_httpd_auth']);
const KNOWN_FUNCTIONS = new Set([
  'cookie_authentication_handler',
  'default_authentication_handler',
  'proxy_authentication_handler',
  // CouchDB keeps this misspelled alias for old configurations.
  'proxy_authentification_handler',
  'jwt_authentication_handler',
]);

const TUPLE = /^\{\s*([a-z_]+)\s*,\s*([a-z_]+)\s*(?:,\s*[^{}]*)?\}$/;

type HandlerListResult = { ok: true; handlers: HandlerSpec[] } | { ok: false; reason: string };

export function parseHandlerList(value: string): HandlerListResult {
  const trimmed = value.trim();
  if (trimmed === '') return { ok: false, reason: 'authentication_handlers is empty' };
  // CouchDB splits only on a comma between `}` and `{`, so commas inside a tuple stay.
  const pieces = trimmed.split(/\}\s*,\s*\{/).map((piece, index, all) => {
    const open = index === 0 ? piece : `{${piece}`;
    return index === all.length - 1 ? open : `${open}}`;
  });
  const handlers: HandlerSpec[] = [];
  for (const piece of pieces) {
    const match = TUPLE.exec(piece.trim());
    if (!match) return { ok: false, reason: `cannot parse authentication handler ${JSON.stringify(piece.trim())}` };
    const [, module, fn] = match as unknown as [string, string, string];
    if (!KNOWN_MODULES.has(module) || !KNOWN_FUNCTIONS.has(fn)) {
      return { ok: false, reason: `unknown authentication handler {${module}, ${fn}}` };
    }
    handlers.push({ module, function: fn, name: fn.slice(0, fn.indexOf('_')) });
  }
  return { ok: true, handlers };
}
