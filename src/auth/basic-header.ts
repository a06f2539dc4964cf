/** What an `Authorization` header says about Basic credentials. */
type BasicHeader =
  | { kind: 'none' }
  | { kind: 'invalid' }
  | { kind: 'credentials'; name: string; password: string };

const NONE: BasicHeader = Object.freeze({ kind: 'none' });
const INVALID: BasicHeader = Object.freeze({ kind: 'invalid' });
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * CouchDB's rules: the value must start with exactly `Basic ` (case-sensitive, one space); the
 * rest is strict standard base64; the first `:` splits name from password; no colon, or exactly
 * `_:_` (the "logout" credentials), means no credentials at all.
 */
export function parseBasicHeader(header: string | undefined): BasicHeader {
  if (header === undefined || !header.startsWith('Basic ')) return NONE;
  const encoded = header.slice(6);
  if (!STRICT_BASE64.test(encoded)) return INVALID;
  const decoded = decodeBase64Utf8(encoded);
  const colon = decoded.indexOf(':');
  if (colon === -1 || decoded === '_:_') return NONE;
  return { kind: 'credentials', name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * UTF-8 text of valid base64. `atob` gives the bytes as a latin1 string with no Buffer made (this
 * runs on every Basic request): the same text when every byte is ASCII; otherwise decoded as UTF-8.
 */
function decodeBase64Utf8(encoded: string): string {
  const bytes = atob(encoded);
  return ASCII.test(bytes) ? bytes : Buffer.from(encoded, 'base64').toString('utf8');
}
