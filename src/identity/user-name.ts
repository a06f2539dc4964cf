/**
 * The one rule on the characters of a user name, for every way a name reaches Divan: `_users`
 * documents, JWT `sub`, proxy headers, and the names cookies and Basic credentials carry.
 *
 * Refused: control characters (Unicode category Cc: C0 U+0000–U+001F, DEL U+007F, C1
 * U+0080–U+009F) and unpaired UTF-16 surrogates. Why those:
 * - per-user database names are CouchDB's hex of the UTF-8 bytes without padding, so a byte below
 *   0x10 (only C0 controls encode to one) gives one digit and two names can share a database
 *   (`"\u0006&\u000f\u0006\u0002"` and `bob` both give `userdb-626f62`); with every byte at 0x10 or
 *   above each byte is exactly two digits and the encoding is one-to-one;
 * - an unpaired surrogate has no UTF-8 form: every one of them encodes as U+FFFD, so `"\ud800"`,
 *   `"\udfff"` and `"\ufffd"` would share a database too;
 * - DEL and C1 never belong in a name and let a name rewrite the lines of a log or a terminal.
 *
 * Refusals are `userNameForbidden` (403, a `_users` write) and `userNameRefused` (400, a name an
 * authentication handler brought) in the error catalog.
 *
 * @example isAcceptableUserName('bob') // true
 * @example isAcceptableUserName('b\u0000ob') // false
 */
const REFUSED = /[\p{Cc}\p{Cs}]/u;

/** True when `name` may be a user name. */
export function isAcceptableUserName(name: string): boolean {
  return !REFUSED.test(name);
}
