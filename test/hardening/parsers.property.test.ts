/**
 * Property tests for every pure parser an HTTP request reaches, thousands of seeded cases each
 * (`HARDENING_SEED` replays, `HARDENING_SCALE` multiplies). The invariant: a parser returns, or
 * throws a 4xx CouchError; never another exception, never a value that breaks the next step
 * (JSON.stringify of a parsed body, a redirect that leaves the origin), never a polluted prototype.
 *
 * Parsers that already have property tests elsewhere are not repeated here: the Basic header
 * (test/unit/auth/basic-parse.test.ts), the AuthSession codec and Cookie header
 * (test/unit/auth/cookie/codec.test.ts), ini lines (test/unit/config/ini.property.test.ts), base32
 * (test/unit/users/totp.test.ts). Their HTTP entry points are in http-*.property.test.ts.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';

import { parseHashAlgorithms } from '../../src/auth/cookie/codec.js';
import { parseHandlerList } from '../../src/auth/handler-list.js';
import { checkPayloadClaims, checkTyp, parseRequiredClaims, type RequiredClaims } from '../../src/auth/jwt/claims.js';
import { decodeHmacSecret, parseKeyEntry } from '../../src/auth/jwt/key-ring.js';
import { extractRoles, parseRolesClaimPath } from '../../src/auth/jwt/roles.js';
import { decodeJsonObject, readAlg, splitToken } from '../../src/auth/jwt/token.js';
import { parseProxyRoles, verifyProxyToken } from '../../src/auth/proxy/proxy-handler.js';
import { isValidDatabaseName } from '../../src/databases/names.js';
import { validateSecurity } from '../../src/databases/security.js';
import { toEdit, validateDocumentId } from '../../src/documents/document-json.js';
import { CouchError, isCouchError } from '../../src/errors/couch-error.js';
import { grantFor } from '../../src/http/cors.js';
import { couchEncode, prefersHtml } from '../../src/http/error-reply.js';
import { PeerResolver } from '../../src/http/peer.js';
import { parseTarget } from '../../src/http/target.js';
import { jsonParam, nonNegativeIntegerParam } from '../../src/http/query.js';
import { MAX_JSON_DEPTH, parseJsonBytes } from '../../src/http/request.js';
import { Sequences } from '../../src/databases/sequences.js';
import { redirectPath } from '../../src/http/routes/session.js';
import type { Json, JsonObject } from '../../src/storage/storage.js';
import { parseAdminHash } from '../../src/users/password-hash.js';
import { totpCode, verifyTotp, type TotpSettings } from '../../src/users/totp.js';
import { prepareUserWrite, USER_PREFIX } from '../../src/users/user-documents.js';
import { parsePasswordRegexp } from '../../src/users/user-password-regexp.js';
import {
  hostileBody,
  hostilePath,
  hostileQuery,
  hostileString,
  isWellFormed,
  jsonObjectText,
  jsonText,
  nestedText,
  pathSegment,
} from '../support/hardening-arbitraries.js';
import { property, prototypeGuard } from '../support/hardening.js';

type Outcome<T> = { ok: true; value: T } | { ok: false; error: CouchError };

/** Runs a parser: it returns, or throws a 4xx CouchError; anything else fails the property. */
function outcome<T>(run: () => T, context: unknown): Outcome<T> {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    assert.ok(isCouchError(error), `${JSON.stringify(context)?.slice(0, 300)} threw ${(error as Error)?.stack ?? String(error)}`);
    assert.ok(error.status >= 400 && error.status < 500, `${JSON.stringify(context)?.slice(0, 300)}: status ${error.status}`);
    return { ok: false, error };
  }
}

async function outcomeAsync<T>(run: () => Promise<T>, context: unknown): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    assert.ok(isCouchError(error), `${JSON.stringify(context)?.slice(0, 300)} threw ${(error as Error)?.stack ?? String(error)}`);
    assert.ok(error.status >= 400 && error.status < 500, `${JSON.stringify(context)?.slice(0, 300)}: status ${error.status}`);
    return { ok: false, error };
  }
}

const parsedObject = (text: string): JsonObject | undefined => {
  const value = JSON.parse(text) as Json;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
};

describe('pure parsers under hostile input (property)', () => {
  const unpolluted = prototypeGuard();
  after(() => unpolluted());

  test('JSON bodies: parseJsonBytes returns something JSON.stringify can write back, or 400', (t) => {
    const p = property('JSON body bytes (parseJsonBytes)', 4000);
    fc.assert(
      fc.property(hostileBody, (bytes) => {
        p.count();
        const result = outcome(() => parseJsonBytes(bytes), bytes.toString('latin1').slice(0, 200));
        if (!result.ok) {
          assert.equal(result.error.status, 400);
          return;
        }
        // What is accepted must survive the next steps: revision hashing, storage and replies all
        // serialise it, and a stack overflow there is a 500 or worse.
        assert.doesNotThrow(() => JSON.stringify(result.value));
      }),
      p.options,
    );
    p.report(t);
  });

  test(`JSON bodies: nesting up to ${MAX_JSON_DEPTH} levels is accepted, deeper is 400 at once (100 000 levels too)`, () => {
    for (const kind of ['array', 'object'] as const) {
      // `{"deep": …}` adds one level.
      assert.doesNotThrow(() => parseJsonBytes(Buffer.from(nestedText(MAX_JSON_DEPTH - 1, kind))));
      for (const depth of [MAX_JSON_DEPTH, 5000, 100_000]) {
        const started = process.hrtime.bigint();
        assert.throws(
          () => parseJsonBytes(Buffer.from(nestedText(depth, kind))),
          (error: unknown) => isCouchError(error) && error.status === 400 && error.error === 'bad_request' && /nest/.test(error.reason),
        );
        assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 1000, 'refused quickly');
      }
    }
    // Brackets inside strings are not nesting.
    assert.doesNotThrow(() => parseJsonBytes(Buffer.from(JSON.stringify({ text: '['.repeat(10_000) }))));
  });

  test('documents: toEdit keeps only ordinary members (and _attachments, for the database layer), as own data properties, whatever the keys', (t) => {
    const p = property('documents (toEdit)', 3000);
    fc.assert(
      fc.property(jsonText, fc.boolean(), (text, newEdits) => {
        p.count();
        const value = JSON.parse(text) as unknown;
        const result = outcome(() => toEdit(value, newEdits ? { newEdits } : { id: 'fixed', newEdits }), text);
        if (!result.ok) return;
        const { edit } = result.value;
        assert.equal(Object.getPrototypeOf(edit.body), Object.prototype, 'body has the plain prototype');
        for (const key of Reflect.ownKeys(edit.body)) {
          assert.equal(typeof key, 'string');
          // `_attachments` goes on to the database layer, which turns it into stubs (or refuses it).
          assert.ok(!(key as string).startsWith('_') || (key === '_attachments' && !edit.id.startsWith('_local/')), `no special member in the body: ${String(key)}`);
        }
        assert.equal(validateDocumentId(edit.id), edit.id);
        assert.doesNotThrow(() => JSON.stringify(edit.body));
      }),
      p.options,
    );
    p.report(t);
  });

  test('document ids: validateDocumentId accepts well-formed, non-empty ids only, or answers 400', (t) => {
    const p = property('document ids (validateDocumentId)', 5000);
    fc.assert(
      fc.property(fc.oneof(hostileString(20), fc.constantFrom('_design/', '_local/', '_design/x', '_local/x', '_x', '')), (id) => {
        p.count();
        const result = outcome(() => validateDocumentId(id), id);
        if (!result.ok) return assert.equal(result.error.status, 400);
        assert.equal(result.value, id);
        assert.ok(id !== '' && id !== '_design/' && id !== '_local/');
        if (id.startsWith('_')) assert.ok(id.startsWith('_design/') || id.startsWith('_local/'));
        // Location headers are built with encodeURIComponent, which throws on a lone surrogate.
        assert.ok(isWellFormed(id), 'an accepted id can be put in a Location header');
        assert.ok(!id.includes('\u0000'), 'an accepted id has no NUL (PostgreSQL text cannot hold one)');
      }),
      p.options,
    );
    p.report(t);
  });

  test('paths: parseTarget decodes each segment once, or refuses the target', (t) => {
    const p = property('request targets (parseTarget)', 5000);
    fc.assert(
      fc.property(hostilePath, hostileQuery, (path, query) => {
        p.count();
        const parsed = parseTarget(path + query);
        if (parsed === undefined) return;
        assert.equal(parsed.path, path);
        const raw = path.split('/').filter((segment) => segment !== '');
        assert.deepEqual(parsed.segments, raw.map((segment) => decodeURIComponent(segment)));
      }),
      p.options,
    );
    fc.assert(
      fc.property(fc.array(hostileString(10).filter((s) => isWellFormed(s) && s !== ''), { maxLength: 5 }), (segments) => {
        p.count();
        const parsed = parseTarget(`/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`);
        assert.deepEqual(parsed?.segments, segments, 'encoded segments come back exactly, slashes, dots and NUL included');
      }),
      { ...p.options, numRuns: p.options.numRuns / 2 },
    );
    p.report(t);
  });

  test('database names: a valid name never holds NUL, a dot segment, a backslash or a leading slash', (t) => {
    const p = property('database names (isValidDatabaseName)', 5000);
    fc.assert(
      fc.property(fc.oneof(hostileString(20), pathSegment.map((segment) => { try { return decodeURIComponent(segment); } catch { return segment; } })), (name) => {
        p.count();
        if (!isValidDatabaseName(name)) return;
        assert.ok(!/[\u0000\\]|\.\.|^\//.test(name), JSON.stringify(name));
        assert.ok(name.length <= 238 && /^[\x21-\x7e]+$/.test(name));
      }),
      p.options,
    );
    p.report(t);
  });

  test('next/fail redirects: redirectPath yields a same-origin path of visible ASCII, or 400', (t) => {
    const p = property('redirect targets (redirectPath)', 6000);
    const offOrigin = fc.constantFrom(
      '//evil.example', '/\\evil.example', '/\\/evil.example', '/\t/evil.example', '/\n/evil.example', '/\r\n/evil.example',
      '/ /evil.example', '/%2F/evil.example', '%2F%2Fevil.example', 'http://evil.example/', 'https:evil.example', '\\\\evil.example',
      '/\u3002/evil', '/\uff0f/evil.example', '/\u2215/evil', '/..//evil.example', '/x/../..//evil', '/x\r\nSet-Cookie: a=b',
      '/\u0000/evil', 'javascript:alert(1)', '/javascript:alert(1)', ' //evil.example', '/@evil.example', '/:@evil.example',
    );
    fc.assert(
      fc.property(fc.oneof(offOrigin, hostileString(20), hostileString(20).map((rest) => `/${rest}`)).filter(isWellFormed), (target) => {
        p.count();
        const result = outcome(() => redirectPath(target), target);
        if (!result.ok) return assert.equal(result.error.status, 400);
        const path = result.value;
        assert.match(path, /^\/(?![/\\])[\x21-\x7e]*$/, `visible ASCII path: ${JSON.stringify(path)}`);
        for (const origin of ['http://origin.example', 'https://origin.example:8443']) {
          assert.equal(new URL(path, `${origin}/x/y`).origin, origin, `${JSON.stringify(target)} → ${path} stays on ${origin}`);
        }
      }),
      p.options,
    );
    p.report(t);
  });

  test('401 redirect Location: couchEncode keeps [A-Za-z0-9_.:-] and percent-encodes the rest, reversibly', (t) => {
    const p = property('redirect query encoding (couchEncode)', 4000);
    fc.assert(
      fc.property(hostileString(30).filter(isWellFormed), (text) => {
        p.count();
        const encoded = couchEncode(text);
        assert.match(encoded, /^[A-Za-z0-9_.:%-]*$/);
        assert.equal(decodeURIComponent(encoded), text);
      }),
      p.options,
    );
    p.report(t);
  });

  test('Accept and Origin headers: prefersHtml and grantFor never throw', (t) => {
    const p = property('Accept / Origin headers (prefersHtml, grantFor)', 4000);
    const settings = {
      enabled: true, anyOrigin: false, credentials: true, origins: new Set(['https://app.example']),
      methods: ['GET'], headers: new Set<string>(), exposedHeaders: [], maxAge: '600',
    } as unknown as Parameters<typeof grantFor>[0];
    const acceptish = fc.array(fc.oneof(fc.constantFrom('text/html', 'application/json', '*/*', ';q=', '0.5', '1e999', 'NaN', ',', ';'), hostileString(6)), { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(acceptish, hostileString(30)), (value) => {
        p.count();
        assert.equal(typeof prefersHtml(value), 'boolean');
        const grant = grantFor(settings, value);
        if (grant) assert.equal(grant.origin, 'https://app.example');
      }),
      p.options,
    );
    p.report(t);
  });

  test('X-Forwarded-For and trusted_proxies: PeerResolver answers an IP address, and only a trusted peer is replaced', (t) => {
    const p = property('X-Forwarded-For / trusted_proxies (PeerResolver)', 4000);
    const address = fc.oneof(
      fc.constantFrom('127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '203.0.113.9', '2001:db8::1', 'fe80::1%eth0', '1.2.3.4.5', '999.1.1.1', '', ' ', 'unknown'),
      fc.ipV4(),
      fc.ipV6(),
      hostileString(12),
    );
    const header = fc.array(fc.tuple(address, fc.constantFrom(',', ', ', ' ,', ',,')), { maxLength: 5 }).map((parts) => parts.map(([a, s]) => a + s).join(''));
    fc.assert(
      fc.property(fc.oneof(hostileString(30), fc.constantFrom('127.0.0.1, ::1', '10.0.0.0/8', '0.0.0.0/0', '::/0', '1.2.3.4/99', '/', ',,')), header, (setting, forwarded) => {
        p.count();
        const resolver = new PeerResolver(setting);
        const fromLoopback = resolver.resolve('127.0.0.1', forwarded);
        // An address, possibly with an IPv6 zone (fe80::1%eth0): nothing that could break a log line.
        assert.ok(fromLoopback === '127.0.0.1' || /^[0-9a-f.:]+(?:%[0-9a-z]+)?$/i.test(fromLoopback), JSON.stringify(fromLoopback));
        const strict = new PeerResolver('127.0.0.1');
        assert.equal(strict.resolve('203.0.113.9', forwarded), '203.0.113.9', 'an untrusted peer cannot pick its address');
      }),
      p.options,
    );
    p.report(t);
  });

  test('proxy headers: roles are trimmed, non-empty, comma-free; a token verifies only if it is the HMAC of the name', (t) => {
    const p = property('proxy headers (parseProxyRoles, verifyProxyToken)', 5000);
    const secret = 'proxy-secret';
    const hex = (name: string, algorithm: string): string => createHmac(algorithm, secret).update(name).digest('hex');
    fc.assert(
      fc.property(
        hostileString(30),
        hostileString(16),
        fc.oneof(
          hostileString(70).map((token) => ({ token, genuine: false })),
          fc.constantFrom('sha256', 'sha1').map((algorithm) => ({ token: undefined as string | undefined, genuine: false, algorithm })),
          fc.tuple(fc.constantFrom('sha256', 'sha1'), fc.boolean(), fc.nat({ max: 63 })).map(([algorithm, upper, flip]) => ({ algorithm, upper, flip, genuine: true, token: undefined as string | undefined })),
        ),
        (rolesHeader, name, choice) => {
          p.count();
          for (const role of parseProxyRoles(rolesHeader)) {
            assert.ok(role !== '' && role === role.trim() && !role.includes(','), JSON.stringify(role));
          }
          let token = choice.token;
          let expected = false;
          if ('algorithm' in choice && choice.genuine) {
            const { algorithm, upper, flip } = choice as { algorithm: string; upper: boolean; flip: number };
            const good = hex(name, algorithm);
            // Half the genuine tokens get one hex digit changed: those must fail.
            const at = flip % good.length;
            const changed = flip >= 32 ? good.slice(0, at) + (good[at] === '0' ? '1' : '0') + good.slice(at + 1) : good;
            token = upper ? changed.toUpperCase() : changed;
            expected = changed === good;
          }
          assert.equal(verifyProxyToken(name, token, [secret], ['sha256', 'sha']), expected, JSON.stringify({ name, token }));
        },
      ),
      p.options,
    );
    p.report(t);
  });

  test('JWT: header, payload and claims of arbitrary tokens give a value or a 4xx, never a crash', (t) => {
    const p = property('JWT header / payload / claims (splitToken … extractRoles)', 5000);
    const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
    const headerText = fc.oneof(
      jsonText,
      fc.record({
        alg: fc.constantFrom('HS256', 'RS256', 'ES256', 'none', 'None', 'hs256', '', 'HS256 ', 42, null, ['HS256'], { x: 1 }),
        typ: fc.constantFrom('JWT', 'jwt', 1, undefined),
        kid: fc.constantFrom('_default', 'x', '__proto__', 'constructor', 1, {}, undefined),
      }, { requiredKeys: [] }).map((header) => JSON.stringify(header)),
      fc.constantFrom('{"alg":"HS256","__proto__":{"alg":"none"}}', '{"constructor":{"prototype":{"alg":"HS256"}}}'),
    );
    const payloadText = fc.oneof(
      jsonObjectText,
      fc.record({
        sub: fc.oneof(fc.constantFrom('', 'alice', 42, null, ['a'], { a: 1 }), hostileString(8)),
        exp: fc.oneof(fc.constantFrom(1e308, -1, 0, 'soon', true, null, 1.5, 2e9), fc.integer()),
        nbf: fc.oneof(fc.constantFrom(-1e308, 'now', false), fc.integer()),
        iat: fc.oneof(fc.constantFrom(1.5, '1', null), fc.integer()),
        iss: fc.constantFrom('hello', '', 1, undefined),
        roles: fc.constantFrom(['a', 'b'], 'a, b', ' , ', 42, null, { a: 1 }, [1], ['_admin']),
        '_couchdb.roles': fc.constantFrom(['a'], 'x', 7),
      }, { requiredKeys: [] }).map((payload) => JSON.stringify(payload)),
    );
    const segment = fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: hostileString(20) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.from(bytes).toString('base64url')) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.from(bytes).toString('base64')) },
    );
    const token = fc
      .tuple(headerText, payloadText, segment, segment, fc.constantFrom(3, 3, 3, 1, 2, 4))
      .map(([header, payload, weirdHeader, weirdPayload, parts]) => {
        const pieces = [weirdHeader ?? b64(header), weirdPayload ?? b64(payload), 'c2ln', 'x'];
        return pieces.slice(0, parts).join('.');
      });
    const claims: fc.Arbitrary<RequiredClaims> = fc.record({
      typ: fc.boolean(), iss: fc.constantFrom(undefined, 'hello', true as const), iat: fc.boolean(), nbf: fc.boolean(), exp: fc.boolean(), kid: fc.boolean(),
    });
    const rolesSource = fc.oneof(
      fc.constantFrom('_couchdb.roles', 'roles', '__proto__', 'constructor', 'toString').map((name) => ({ name })),
      fc.constantFrom('roles', 'a.b', '__proto__.x', 'constructor.prototype', 'roles\\.x', '', '.', '..').map((path) => ({ name: 'roles', path: parseRolesClaimPath(path) })),
    );
    const now = 1_700_000_000;
    fc.assert(
      fc.property(token, claims, rolesSource, (text, required, source) => {
        p.count();
        outcome(() => {
          const [h, pl] = splitToken(text);
          const header = decodeJsonObject(h);
          checkTyp(header, required);
          readAlg(header);
          const payload = decodeJsonObject(pl);
          checkPayloadClaims(payload, required, now);
          if (required.exp) assert.ok(typeof payload['exp'] === 'number' && payload['exp'] > now, 'a passing exp is in the future');
          if (required.nbf) assert.ok(typeof payload['nbf'] === 'number' && payload['nbf'] < now, 'a passing nbf is in the past');
          const roles = extractRoles(payload, source);
          assert.ok(Array.isArray(roles) && roles.every((role) => typeof role === 'string'));
        }, text);
      }),
      p.options,
    );
    p.report(t);
  });

  test('JWT settings: required_claims, roles_claim_path and [jwt_keys] values never throw', (t) => {
    const p = property('JWT settings (parseRequiredClaims, parseRolesClaimPath, [jwt_keys])', 4000);
    const settingText = fc.oneof(
      hostileString(40),
      fc.array(fc.constantFrom('exp', 'nbf', 'iat', 'iss', 'typ', 'kid', 'sig', 'alg', 'sub', '{iss, "x"}', '{exp, "y"}', ',', ' ', '{', '}', '"'), { maxLength: 8 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(settingText, fc.constantFrom('hmac', 'rsa', 'ec', 'okp') as fc.Arbitrary<'hmac' | 'rsa' | 'ec' | 'okp'>, (value, kind) => {
        p.count();
        const claims = parseRequiredClaims(value);
        assert.equal(typeof claims.ok, 'boolean');
        const path = parseRolesClaimPath(value);
        assert.ok(path.every((segment) => typeof segment === 'string'));
        const secret = decodeHmacSecret(value);
        if (secret !== undefined) assert.ok(secret.length > 0);
        const entry = parseKeyEntry(kind, `-----BEGIN PUBLIC KEY-----\\n${value}\\n-----END PUBLIC KEY-----`);
        assert.ok(entry !== undefined);
        assert.ok(parseKeyEntry(kind, value) !== undefined);
      }),
      p.options,
    );
    p.report(t);
  });

  test('config values: [admins] hashes, authentication_handlers, hash_algorithms, password_regexp never throw', (t) => {
    const p = property('config values ([admins], authentication_handlers, hash_algorithms, password_regexp)', 4000);
    const termish = fc.array(fc.oneof(fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', '$', "'", '.', '*', '(', ')', '+', '?', 'a', '1', ' '), hostileString(3)), { maxLength: 20 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(hostileString(40), termish, fc.constantFrom('-pbkdf2-abc,salt,10', '-pbkdf2:sha256-00,s,99999999999999999999', '-hashed-00,', '{chttpd_auth, cookie_authentication_handler}')), (value) => {
        p.count();
        parseAdminHash(value);
        parseHandlerList(value);
        assert.ok(parseHashAlgorithms(value).length > 0);
        parsePasswordRegexp(value);
      }),
      p.options,
    );
    p.report(t);
  });

  test('query parameters: JSON keys, integers and since give a value or a 400; integers stay safe', (t) => {
    const p = property('query parameters (jsonParam, nonNegativeIntegerParam, Sequences.parse)', 4000);
    const value = fc.oneof(jsonText, hostileString(20), fc.constantFrom('99999999999999999999', `1${'0'.repeat(400)}`, '-1', '1e3', '"5-abc"', 'now', '0', '', '5-g1AAAAB', new Sequences('1700000000000000').format(7)));
    fc.assert(
      fc.property(value, (text) => {
        p.count();
        const query = new URLSearchParams([['k', text]]);
        const json = outcome(() => jsonParam(query, 'k'), text);
        if (json.ok) assert.doesNotThrow(() => JSON.stringify(json.value));
        const integer = outcome(() => nonNegativeIntegerParam(query, 'k'), text);
        if (integer.ok && integer.value !== undefined) assert.ok(Number.isSafeInteger(integer.value) && integer.value >= 0, `${text} → ${integer.value}`);
        const since = outcome(() => new Sequences('1700000000000000').parse(text, 42), text);
        if (since.ok) assert.ok(Number.isSafeInteger(since.value) && since.value >= 0, `${text} → ${since.value}`);
      }),
      p.options,
    );
    p.report(t);
  });

  test('_security bodies: validateSecurity accepts an object or answers 400', (t) => {
    const p = property('_security bodies (validateSecurity)', 3000);
    fc.assert(
      fc.property(jsonText, (text) => {
        p.count();
        outcome(() => validateSecurity(JSON.parse(text)), text);
      }),
      p.options,
    );
    p.report(t);
  });

  test('user documents: what a non-admin writer gets stored never has other roles than before (duplicate keys included)', async (t) => {
    const p = property('_users documents (prepareUserWrite)', 2500);
    const settings = { scheme: 'simple', prf: 'sha256', iterations: 1, passwordRegexp: '' };
    const rolesText = fc.oneof(
      fc.constantFrom('[]', '["r"]', '["_admin"]', '["r","ops"]', '["ops"]', '["_metrics"]', '"ops"', 'null', '{}', '[1]', '["r","r"]'),
      fc.array(fc.constantFrom('"r"', '"ops"', '"_admin"', '"x"', '1', 'null'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    );
    const member = fc.oneof(
      { weight: 3, arbitrary: rolesText.map((roles) => `"roles":${roles}`) },
      { weight: 2, arbitrary: fc.constantFrom('"type":"user"', '"name":"bob"', '"name":"eve"', '"name":["bob"]', '"type":"admin"', '"password":"pw"', '"password":1', '"salt":"s"', '"preserve_salt":true', '"_deleted":true', '"_rev":"1-abc"', '"derived_key":"00"', '"password_scheme":"pbkdf2"', '"iterations":"x"', '"__proto__":{"roles":["_admin"]}', '"constructor":{"name":"x"}') },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...['a', '__proto__', 'constructor', 'totp']), jsonText).map(([k, v]) => `"${k}":${v}`) },
    );
    const docText = fc.array(member, { maxLength: 8 }).map((members) => `{"_id":"${USER_PREFIX}bob",${['"type":"user"', '"name":"bob"', ...members].join(',')}}`);
    const oldRoles = ['r'];
    const stored: JsonObject = { _id: `${USER_PREFIX}bob`, _rev: '1-abc', type: 'user', name: 'bob', roles: oldRoles, password_scheme: 'simple', salt: 's', password_sha: '00' };
    const writers = [
      { label: 'anonymous', userCtx: { name: null, roles: [] as string[] }, isAdmin: false },
      { label: 'owner', userCtx: { name: 'bob', roles: ['r'] }, isAdmin: false },
      { label: 'other user', userCtx: { name: 'eve', roles: ['r'] }, isAdmin: false },
      { label: 'admin', userCtx: { name: 'root', roles: ['_admin'] }, isAdmin: true },
    ];
    await fc.assert(
      fc.asyncProperty(docText, fc.constantFrom(...writers), fc.boolean(), async (text, writer, update) => {
        p.count();
        const doc = parsedObject(text)!;
        const oldDoc = update ? stored : undefined;
        const result = await outcomeAsync(() => prepareUserWrite(doc, oldDoc, writer, settings), { text, writer: writer.label, update });
        if (!result.ok) return;
        const written = result.value;
        assert.notEqual(writer.label, 'other user', 'another user can never write bob');
        if (written['_deleted'] === true) return;
        const roles = written['roles'] as string[];
        // The object validated is the object returned: JSON.parse kept the last duplicate.
        assert.deepEqual(roles, doc['roles']);
        assert.ok(roles.every((role) => role === '_metrics' || !role.startsWith('_')), `no system role: ${text}`);
        assert.equal(written['name'], 'bob');
        if (!writer.isAdmin) {
          assert.deepEqual([...roles].sort(), update ? oldRoles : [], `${writer.label} cannot change roles: ${text}`);
        }
        assert.equal(Object.getPrototypeOf(written), Object.prototype);
      }),
      p.options,
    );
    p.report(t);
  });

  test('TOTP codes: only one of the three current codes is accepted', (t) => {
    const p = property('TOTP codes (verifyTotp)', 4000);
    const settings: TotpSettings = { key: Buffer.from('12345678901234567890'), algorithm: 'sha', length: 6 };
    const now = 1_700_000_000;
    const valid = new Set([-1, 0, 1].map((step) => totpCode(settings.key, Math.floor(now / 30) + step, 'sha', 6)));
    fc.assert(
      fc.property(fc.oneof(hostileString(8), fc.stringMatching(/^[0-9]{5,7}$/), fc.constantFrom(...valid)), (token) => {
        p.count();
        assert.equal(verifyTotp(token, settings, now).ok, valid.has(token));
      }),
      p.options,
    );
    p.report(t);
  });
});
