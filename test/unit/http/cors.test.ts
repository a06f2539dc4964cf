// CORS rules in isolation, checked against CouchDB's chttpd_cors.erl and chttpd_cors_test.erl.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConfigChange } from '../../../src/config/config.js';
import {
  Cors,
  DEFAULT_ALLOWED_HEADERS,
  DEFAULT_ALLOWED_METHODS,
  DEFAULT_EXPOSED_HEADERS,
  addCorsHeaders,
  addVary,
  affectsCors,
  grantFor,
  preflight,
  readCorsSettings,
  splitList,
  type CorsSettings,
} from '../../../src/http/cors.js';
import type { OutgoingHeaders } from '../../../src/http/reply.js';
import { Logger } from '../../../src/log/logger.js';

const ORIGIN = 'http://example.com';
// chttpd_cors_test.erl's ?EXPOSED_HEADERS (a response with no simple header but Content-Type).
const COUCH_EXPOSED = 'content-type, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time';
const COUCH_METHODS = 'CONNECT, COPY, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE';

type Sections = Record<string, Record<string, string>>;

/** A config double: `get`/`getBoolean` over plain sections, and change events on `set`. */
function fakeConfig(sections: Sections) {
  const listeners: Array<(change: ConfigChange) => void> = [];
  return {
    get: (section: string, key: string) => sections[section]?.[key],
    getBoolean: (section: string, key: string, fallback: boolean) => {
      const value = sections[section]?.[key]?.trim().toLowerCase();
      return value === 'true' ? true : value === 'false' ? false : fallback;
    },
    onChange(listener: (change: ConfigChange) => void) {
      listeners.push(listener);
      return () => undefined;
    },
    set(section: string, key: string, value: string | undefined) {
      const previous = sections[section]?.[key];
      sections[section] ??= {};
      if (value === undefined) delete sections[section]![key];
      else sections[section]![key] = value;
      for (const listener of listeners) listener({ section, key, value, previous, written: value, remote: false });
    },
  };
}

function settingsOf(cors: Record<string, string>, enabled = true): CorsSettings {
  return readCorsSettings(fakeConfig({ chttpd: { enable_cors: String(enabled) }, cors })).settings;
}

function preflightHeaders(origin: string, method = 'GET', extra: Record<string, string> = {}) {
  return { origin, 'access-control-request-method': method, ...extra };
}

function answered(result: ReturnType<typeof preflight>): Record<string, string> {
  assert.equal(result.kind, 'answer', JSON.stringify(result));
  return (result as { headers: Record<string, string> }).headers;
}

function jsonReplyHeaders(): OutgoingHeaders {
  return { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate', 'X-Couch-Request-ID': 'abc', Server: 'Divan/0', 'Content-Length': 3 };
}

describe('CORS settings', () => {
  test('CouchDB defaults: off, no origins, no credentials, the built-in lists, max_age 600', () => {
    const { settings, warnings } = readCorsSettings(fakeConfig({}));
    assert.equal(settings.enabled, false);
    assert.equal(settings.credentials, false);
    assert.equal(settings.anyOrigin, false);
    assert.deepEqual([...settings.origins], []);
    assert.equal(settings.methods.join(', '), COUCH_METHODS);
    assert.deepEqual([...settings.headers], [...DEFAULT_ALLOWED_HEADERS]);
    assert.deepEqual(DEFAULT_ALLOWED_HEADERS.length, 19);
    assert.deepEqual(settings.exposedHeaders, DEFAULT_EXPOSED_HEADERS);
    assert.equal(settings.maxAge, '600');
    assert.deepEqual(warnings, []);
  });

  test('lists split on commas with any spacing; headers and exposed headers are lower-cased, methods are not', () => {
    const settings = settingsOf({
      origins: ' http://a.example ,https://b.example:8443,, *',
      methods: 'GET,post , PUT',
      headers: 'X-Extra , Content-Type',
      exposed_headers: 'X-Expose,ETag',
      max_age: '0042',
    });
    assert.deepEqual([...settings.origins], ['http://a.example', 'https://b.example:8443']);
    assert.equal(settings.anyOrigin, true);
    assert.deepEqual(settings.methods, ['GET', 'post', 'PUT']);
    assert.deepEqual([...settings.headers], ['x-extra', 'content-type']);
    assert.deepEqual(settings.exposedHeaders, ['x-expose', 'etag']);
    assert.equal(settings.maxAge, '42');
    assert.deepEqual(splitList('a ,b,  c,'), ['a', 'b', 'c']);
  });

  test('blank list settings mean the defaults; a bad max_age is 600 with a warning', () => {
    const { settings, warnings } = readCorsSettings(fakeConfig({ cors: { methods: ' ', headers: '', max_age: '10 minutes' } }));
    assert.equal(settings.methods.join(', '), COUCH_METHODS);
    assert.deepEqual([...settings.headers], [...DEFAULT_ALLOWED_HEADERS]);
    assert.equal(settings.maxAge, '600');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /max_age/);
  });

  test('warnings: origins without a scheme, and * together with credentials', () => {
    const { warnings } = readCorsSettings(fakeConfig({ cors: { origins: 'example.com, http://ok.example, http://slash.example/, null, *', credentials: 'true' } }));
    assert.equal(warnings.length, 3, warnings.join('\n'));
    assert.match(warnings[0]!, /"example\.com"/);
    assert.match(warnings[1]!, /"http:\/\/slash\.example\/"/);
    assert.match(warnings[2]!, /origins = \* with credentials = true/);
  });

  test('only [cors] and [chttpd] enable_cors are changes CORS cares about', () => {
    assert.equal(affectsCors({ section: 'cors', key: 'origins' }), true);
    assert.equal(affectsCors({ section: 'cors', key: 'anything' }), true);
    assert.equal(affectsCors({ section: 'chttpd', key: 'enable_cors' }), true);
    assert.equal(affectsCors({ section: 'chttpd', key: 'require_valid_user' }), false);
    assert.equal(affectsCors({ section: 'cors:example.com', key: 'origins' }), false);
  });

  test('Cors parses once per change, not per read, and logs warnings only while enabled', () => {
    const config = fakeConfig({ cors: { origins: ORIGIN, max_age: 'soon' } });
    let reads = 0;
    const counting = { ...config, get: (section: string, key: string) => (reads++, config.get(section, key)) };
    const lines: string[] = [];
    const cors = new Cors(counting, new Logger('warning', { write: (line: string) => lines.push(line) }));
    const first = cors.settings;
    const readsAfterLoad = reads;
    for (let i = 0; i < 5; i++) assert.equal(cors.settings, first);
    assert.equal(reads, readsAfterLoad, 'reading settings does not touch the config');
    assert.equal(first.enabled, false);
    assert.deepEqual(lines, [], 'no warnings while CORS is off');

    config.set('chttpd', 'enable_cors', 'true');
    assert.equal(cors.settings.enabled, true);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /\[warning\].*cors: \[cors\] max_age/);

    config.set('cors', 'origins', 'http://other.example');
    assert.deepEqual([...cors.settings.origins], ['http://other.example']);
    const beforeUnrelated = cors.settings;
    config.set('chttpd', 'require_valid_user', 'true');
    assert.equal(cors.settings, beforeUnrelated, 'an unrelated change does not re-parse');
    config.set('chttpd', 'enable_cors', undefined);
    assert.equal(cors.settings.enabled, false);
  });
});

describe('CORS origin matching', () => {
  test('exact, case-sensitive match; scheme and port are part of the origin (CouchDB multiple_cors_config)', () => {
    const settings = settingsOf({ origins: `${ORIGIN}, https://example.com:5984` });
    assert.deepEqual(grantFor(settings, ORIGIN), { origin: ORIGIN, credentials: false });
    assert.deepEqual(grantFor(settings, 'https://example.com:5984'), { origin: 'https://example.com:5984', credentials: false });
    assert.equal(grantFor(settings, 'https://example.com'), undefined);
    assert.equal(grantFor(settings, 'http://example.com:5984'), undefined);
    assert.equal(grantFor(settings, 'http://EXAMPLE.COM'), undefined);
    assert.equal(grantFor(settings, undefined), undefined);
    assert.equal(grantFor(settings, ''), undefined);
  });

  test('nothing is granted while CORS is off or no origin is configured', () => {
    assert.equal(grantFor(settingsOf({ origins: ORIGIN }, false), ORIGIN), undefined);
    assert.equal(grantFor(settingsOf({}), ORIGIN), undefined);
  });

  test('credentials are granted to listed origins only: * never carries them (CouchDB would)', () => {
    assert.deepEqual(grantFor(settingsOf({ origins: ORIGIN, credentials: 'true' }), ORIGIN), { origin: ORIGIN, credentials: true });
    const wildcard = settingsOf({ origins: '*', credentials: 'true' });
    assert.deepEqual(grantFor(wildcard, 'http://evil.example'), { origin: 'http://evil.example', credentials: false });
    assert.deepEqual(grantFor(wildcard, '*'), { origin: '*', credentials: false });
    const mixed = settingsOf({ origins: `*, ${ORIGIN}`, credentials: 'true' });
    assert.deepEqual(grantFor(mixed, ORIGIN), { origin: ORIGIN, credentials: true });
    assert.deepEqual(grantFor(mixed, 'http://evil.example'), { origin: 'http://evil.example', credentials: false });
  });

  test('an Origin holding several values is refused even with *', () => {
    const wildcard = settingsOf({ origins: '*' });
    assert.equal(grantFor(wildcard, 'http://a.example, http://b.example'), undefined);
    assert.equal(grantFor(wildcard, 'http://a.example http://b.example'), undefined);
    assert.deepEqual(grantFor(wildcard, 'null'), { origin: 'null', credentials: false });
  });
});

describe('CORS preflight', () => {
  const simple = settingsOf({ origins: ORIGIN });

  test('test_preflight_request_: allowed origin and method get origin, methods, max age and empty allowed headers', () => {
    const headers = answered(preflight(simple, 'OPTIONS', preflightHeaders(ORIGIN)));
    assert.deepEqual(headers, {
      'Access-Control-Allow-Origin': ORIGIN,
      'Access-Control-Max-Age': '600',
      'Access-Control-Allow-Methods': COUCH_METHODS,
      'Access-Control-Allow-Headers': '',
      Vary: 'Origin',
    });
  });

  test('test_good_headers_preflight_request_: requested headers in the list are repeated as sent', () => {
    const headers = answered(preflight(simple, 'OPTIONS', preflightHeaders(ORIGIN, 'POST', { 'access-control-request-headers': 'Content-Type,authorization' })));
    assert.equal(headers['Access-Control-Allow-Headers'], 'Content-Type,authorization');
  });

  test('test_bad_headers_preflight_request_: one header not in the list refuses the preflight', () => {
    assert.deepEqual(preflight(simple, 'OPTIONS', preflightHeaders(ORIGIN, 'GET', { 'access-control-request-headers': 'content-type, X-Not-An-Allowed-Header' })), { kind: 'refused' });
  });

  test('a method not in the list refuses the preflight; methods are case-sensitive', () => {
    const custom = settingsOf({ origins: ORIGIN, methods: 'GET, POST' });
    assert.deepEqual(preflight(custom, 'OPTIONS', preflightHeaders(ORIGIN, 'PUT')), { kind: 'refused' });
    assert.deepEqual(preflight(custom, 'OPTIONS', preflightHeaders(ORIGIN, 'get')), { kind: 'refused' });
    assert.equal(answered(preflight(custom, 'OPTIONS', preflightHeaders(ORIGIN, 'POST')))['Access-Control-Allow-Methods'], 'GET, POST');
  });

  test('custom headers, methods and max_age (test_good_headers_preflight_request_with_custom_config_)', () => {
    const custom = settingsOf({ origins: '*', methods: 'GET, PUT', headers: 'Extra, accept-language', max_age: '300' });
    const headers = answered(preflight(custom, 'OPTIONS', preflightHeaders(ORIGIN, 'PUT', { 'access-control-request-headers': 'accept-language, extra' })));
    assert.equal(headers['Access-Control-Allow-Methods'], 'GET, PUT');
    assert.equal(headers['Access-Control-Allow-Headers'], 'accept-language, extra');
    assert.equal(headers['Access-Control-Max-Age'], '300');
    assert.deepEqual(preflight(custom, 'OPTIONS', preflightHeaders(ORIGIN, 'PUT', { 'access-control-request-headers': 'content-type' })), { kind: 'refused' });
  });

  test('credentials: the origin itself and Allow-Credentials true; none for a * match', () => {
    const withCredentials = answered(preflight(settingsOf({ origins: ORIGIN, credentials: 'true' }), 'OPTIONS', preflightHeaders(ORIGIN)));
    assert.equal(withCredentials['Access-Control-Allow-Origin'], ORIGIN);
    assert.equal(withCredentials['Access-Control-Allow-Credentials'], 'true');
    const wildcard = answered(preflight(settingsOf({ origins: '*', credentials: 'true' }), 'OPTIONS', preflightHeaders(ORIGIN)));
    assert.equal(wildcard['Access-Control-Allow-Origin'], ORIGIN);
    assert.equal(wildcard['Access-Control-Allow-Credentials'], undefined);
    const off = answered(preflight(simple, 'OPTIONS', preflightHeaders(ORIGIN)));
    assert.equal(off['Access-Control-Allow-Credentials'], undefined);
  });

  test('not a preflight: other methods, no Origin, no Access-Control-Request-Method, CORS off, origin not allowed', () => {
    assert.deepEqual(preflight(simple, 'GET', preflightHeaders(ORIGIN)), { kind: 'none' });
    assert.deepEqual(preflight(simple, 'OPTIONS', { 'access-control-request-method': 'GET' }), { kind: 'none' });
    assert.deepEqual(preflight(simple, 'OPTIONS', { origin: ORIGIN }), { kind: 'none' });
    assert.deepEqual(preflight(settingsOf({ origins: ORIGIN }, false), 'OPTIONS', preflightHeaders(ORIGIN)), { kind: 'none' });
    assert.deepEqual(preflight(simple, 'OPTIONS', preflightHeaders('http://127.0.0.1')), { kind: 'none' });
    assert.deepEqual(preflight(settingsOf({}), 'OPTIONS', preflightHeaders(ORIGIN)), { kind: 'none' });
  });
});

describe('CORS headers on responses', () => {
  test('test_db_request_: an allowed origin gets the origin and CouchDB exposed headers', () => {
    const headers: OutgoingHeaders = { 'X-Couch-Request-ID': 'abc' };
    addCorsHeaders(settingsOf({ origins: ORIGIN }), { origin: ORIGIN, credentials: false }, headers);
    assert.equal(headers['Access-Control-Allow-Origin'], ORIGIN);
    assert.equal(headers['Access-Control-Expose-Headers'], COUCH_EXPOSED);
    assert.equal(headers['Access-Control-Allow-Credentials'], undefined);
    assert.equal(headers['Vary'], 'Origin');
  });

  test('a JSON reply exposes content-type first, then cache-control, then the Couch headers (as CouchDB answers)', () => {
    const headers = jsonReplyHeaders();
    addCorsHeaders(settingsOf({ origins: ORIGIN, credentials: 'true' }), { origin: ORIGIN, credentials: true }, headers);
    assert.equal(
      headers['Access-Control-Expose-Headers'],
      'content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time',
    );
    assert.equal(headers['Access-Control-Allow-Credentials'], 'true');
  });

  test('other simple headers the reply has are exposed; custom exposed_headers replace the Couch ones', () => {
    const headers: OutgoingHeaders = { ...jsonReplyHeaders(), 'Last-Modified': 'x', Pragma: 'no-cache', ETag: '"1"' };
    addCorsHeaders(settingsOf({ origins: '*', exposed_headers: 'Expose, etag, content-type' }), { origin: ORIGIN, credentials: false }, headers);
    assert.equal(headers['Access-Control-Expose-Headers'], 'content-type, cache-control, last-modified, pragma, expose, etag');
  });

  test('a refused origin gets only Vary: Origin; CORS off adds nothing at all', () => {
    const refused = jsonReplyHeaders();
    addCorsHeaders(settingsOf({ origins: ORIGIN }), undefined, refused);
    assert.deepEqual(Object.keys(refused).filter((name) => /^(access-control-|vary)/i.test(name)), ['Vary']);
    const off = jsonReplyHeaders();
    addCorsHeaders(settingsOf({ origins: ORIGIN }, false), { origin: ORIGIN, credentials: true }, off);
    assert.deepEqual(off, jsonReplyHeaders());
  });

  test('Vary: Origin joins an existing Vary once, whatever its case, and leaves Vary: * alone', () => {
    const cases: Array<[OutgoingHeaders, OutgoingHeaders]> = [
      [{}, { Vary: 'Origin' }],
      [{ Vary: 'Accept' }, { Vary: 'Accept, Origin' }],
      [{ vary: 'accept-encoding, origin' }, { vary: 'accept-encoding, origin' }],
      [{ Vary: ['Accept', 'Cookie'] }, { Vary: 'Accept, Cookie, Origin' }],
      [{ Vary: '*' }, { Vary: '*' }],
      [{ Vary: '' }, { Vary: 'Origin' }],
    ];
    for (const [input, expected] of cases) {
      const headers = { ...input };
      addVary(headers, 'Origin');
      assert.deepEqual(headers, expected, JSON.stringify(input));
    }
  });

  test('the default methods are CouchDB list, in its order', () => {
    assert.deepEqual(DEFAULT_ALLOWED_METHODS, COUCH_METHODS.split(', '));
  });
});
