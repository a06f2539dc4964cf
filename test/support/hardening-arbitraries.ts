/**
 * fast-check arbitraries for hostile input, shared by the pure and the HTTP property tests of
 * test/hardening/. Everything is built as text or bytes, never as JS objects first: an object
 * literal with a `__proto__` key, or a duplicate key, cannot be written any other way.
 */
import fc from 'fast-check';

/** Characters that each break some rule somewhere: separators, escapes, controls, look-alikes. */
export const TRICKY_CHARS = [
  'a', 'Z', '0', '9', '_', '-', '.', '~', '+',
  '/', '\\', '%', '2', 'F', 'f', 'C', '5', 'e',
  ':', '@', '?', '#', '&', '=', ';', ',', '!', '*', '(', ')', '$',
  ' ', '\t', '\n', '\r', '\u000b', '\f', '\u0000', '\u001f', '\u007f',
  '"', "'", '<', '>', '{', '}', '[', ']', '`', '|', '^',
  'é', '\u00a0', '\u00ff', '\u0100', '\u2028', '\u2029', '\ufeff', '\u202e', '\u200b',
  '\u3002', '\uff0f', '\uff3c', '\u2215', '\u2044', '😀',
  '\ud800', '\udc00',
] as const;

export const trickyChar = fc.constantFrom(...TRICKY_CHARS);

/** Strings mixing the tricky characters with arbitrary code points, lone surrogates included. */
export function hostileString(maxLength = 24): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: trickyChar, maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'binary-ascii', maxLength }),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength }),
  );
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether a string has no lone surrogate (`String.prototype.isWellFormed`, typed for ES2023). */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Keys that have meant trouble somewhere: prototype members, CouchDB specials, user-doc fields. */
export const HOSTILE_KEYS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__',
  '_id', '_rev', '_deleted', '_revisions', '_attachments', '_conflicts', '_local_seq', '_bogus',
  'roles', 'name', 'type', 'password', 'salt', 'derived_key', 'iterations', 'password_scheme', 'preserve_salt',
  'totp', 'members', 'admins', 'names', 'docs', 'new_edits', 'keys',
  '', ' ', '\u0000', 'a', 'b',
] as const;

const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...HOSTILE_KEYS) }, { weight: 1, arbitrary: hostileString(8) });

/** Number literals as text, including ones JavaScript cannot hold exactly or at all. */
export const NUMBER_TEXTS = [
  '0', '-0', '1', '-1', '0.5', '1e308', '1e309', '-1e309', '1e-400', '-1e-400', '5e-324',
  '9007199254740993', '-9007199254740993', '123456789012345678901234567890123456789',
  '1E+2', '1e0', '0.000000000000000000000000000001', `1${'0'.repeat(400)}`, `0.${'1'.repeat(400)}`,
] as const;

const numberText = fc.oneof(
  fc.constantFrom(...NUMBER_TEXTS),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc.integer().map(String),
);

/** String literals as text: JSON.stringify escapes lone surrogates as `\udXXX`, controls as `\u00XX`. */
const stringText = fc.oneof(
  hostileString(16).map((text) => JSON.stringify(text)),
  fc.constantFrom('"\\u0000"', '"\\ud800"', '"\\udfff\\ud800"', '"\\u202e"', '"a\\/b"', '"\\"\\\\"', '"org.couchdb.user:x"', '"_admin"'),
);

const scalarText = fc.oneof(numberText, stringText, fc.constantFrom('true', 'false', 'null'));

/**
 * JSON text of arbitrary shape, duplicate keys and `__proto__` keys included. Roughly half the
 * values are objects, because that is what endpoints want.
 */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalarText, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(key, tie('value')), { maxLength: 6 })
    .map((entries) => `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`),
})).value;

/** A JSON object text (the shape documents and most bodies need). */
export const jsonObjectText: fc.Arbitrary<string> = fc
  .array(fc.tuple(key, jsonText), { maxLength: 8 })
  .map((entries) => `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`);

/** `{"deep": [[[…]]]}` or `{"deep": {"a":{"a":…}}}` nested `depth` levels. */
export function nestedText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `{"deep":${'['.repeat(depth)}1${']'.repeat(depth)}}`
    : `{"deep":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
}

export const deepJsonText = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 500, max: 100_000 })), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, kind]) => nestedText(depth, kind));

/** Bytes that are not UTF-8: stray continuation bytes, overlongs, surrogates encoded, truncations. */
export const INVALID_UTF8 = [
  [0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xff], [0xfe], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc3],
] as const;

/** A JSON object whose bytes contain invalid UTF-8 inside a string, a key, or between tokens. */
export const invalidUtf8Body: fc.Arbitrary<Buffer> = fc
  .tuple(fc.constantFrom(...INVALID_UTF8), fc.constantFrom('value', 'key', 'between'), fc.string({ maxLength: 6 }))
  .map(([bad, where, filler]) => {
    const badBytes = Buffer.from(bad);
    const f = Buffer.from(filler.replace(/["\\]/g, ''), 'utf8');
    const text = (s: string): Buffer => Buffer.from(s, 'utf8');
    if (where === 'value') return Buffer.concat([text('{"a":"'), f, badBytes, text('"}')]);
    if (where === 'key') return Buffer.concat([text('{"'), badBytes, f, text('":1}')]);
    return Buffer.concat([text('{"a":1,'), badBytes, text('"b":2}')]);
  });

/** Any body a client could send: JSON text, deep JSON, invalid UTF-8, or raw bytes. */
export const hostileBody: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: jsonObjectText.map((text) => Buffer.from(text, 'utf8')) },
  { weight: 2, arbitrary: jsonText.map((text) => Buffer.from(text, 'utf8')) },
  { weight: 1, arbitrary: deepJsonText.map((text) => Buffer.from(text, 'utf8')) },
  { weight: 1, arbitrary: invalidUtf8Body },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: hostileString(32).map((text) => Buffer.from(text, 'utf8')) },
);

/** A path segment, percent-encoded or raw: encoded slashes, dot segments, NUL, bad escapes. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '..', '.', '%2e%2e', '%2E%2E', '%2F', '%2f', '..%2F..', '%5C', '%00', 'a%00b', '%', '%zz', '%E2%9C', '%ED%A0%80',
    '%C0%AF', '%FF', '_design', '_local', '_users', '_all_docs', '_bulk_docs', '_changes', '_security', '_session',
    '_config', '_node', '_local%2Fx', '_design%2Fx', 'org.couchdb.user:x', 'org.couchdb.user%3Ax', '__proto__',
    'constructor', 'prototype', '%5F%5Fproto%5F%5F', 'db', 'doc', '', '%20', '+', ';', '%3B', '%3F', '%23',
  ),
  hostileString(10).filter(isWellFormed).map((text) => encodeURIComponent(text)),
  fc.string({ unit: fc.constantFrom('a', '.', '%', '2', 'F', 'f', '0', '/', '_', 'x'), maxLength: 10 }),
);

/** A request path (no query) made of hostile segments, sometimes with doubled or trailing slashes. */
export const hostilePath: fc.Arbitrary<string> = fc
  .tuple(fc.array(pathSegment, { minLength: 0, maxLength: 5 }), fc.constantFrom('/', '//', '/./'), fc.boolean())
  .map(([segments, joiner, trailing]) => `/${segments.join(joiner)}${trailing ? '/' : ''}`);

/** Hostile values for query parameters: numbers past 2^53, bad JSON, NUL and lone surrogates in keys, off-origin paths. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'true', 'false', '', '1', '0', '-1', '99999999999999999999', `1${'0'.repeat(40)}`, '1e400', '1.5', 'NaN', 'now',
    '"a"', '["a"]', '[', '{"a":1}', 'null', '[[[[[[[[[[[[]]]]]]]]]]]]', '1-abc', '1-', 'a-b', '2-0123456789abcdef',
    'continuous', 'longpoll', 'eventsource', 'normal', 'all_docs', '//evil.example', '/\\evil', '%2F%2Fevil',
    '"a\\u0000"', '["a\\u0000"]', '"\\u0000"', '"\\ud800"', '["\\udfff"]', '"pub"', '["doc-1"]',
  ),
  jsonText.filter((text) => text.length < 200),
  hostileString(12).filter(isWellFormed),
);

export const QUERY_PARAMETERS = [
  'rev', 'revs', 'conflicts', 'meta', 'new_edits', 'keys', 'key', 'startkey', 'start_key', 'endkey', 'end_key',
  'limit', 'skip', 'descending', 'include_docs', 'inclusive_end', 'since', 'feed', 'style', 'doc_ids', 'filter',
  'next', 'fail', 'basic', 'count', 'timeout', 'heartbeat', 'local_seq', 'deleted_conflicts', 'update_seq', 'x',
] as const;

/** A query string of up to four `name=value` pairs, names from `names`, values hostile. */
export function queryOf(names: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...names), queryValue), { maxLength: 4 })
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&')}`));
}

/** A query string with CouchDB's parameters, fed hostile values. */
export const hostileQuery: fc.Arbitrary<string> = queryOf(QUERY_PARAMETERS);

/** Header-value bytes: printable, obs-text (0x80–0xff), and the controls HTTP forbids (NUL, DEL, …). */
export const headerBytes: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: hostileString(40).filter(isWellFormed).map((text) => Buffer.from(text.replace(/[\r\n]/g, ''), 'utf8')) },
  // No CR or LF: a line break would start another header (a Content-Length, say) and turn the case
  // into a slow-client test, which test/hardening/limits.test.ts covers on its own.
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes.filter((b) => b !== 0x0d && b !== 0x0a))) },
);
