/**
 * Property tests for the authentication entry points over real HTTP (one in-process server for
 * the file, a fresh raw connection per case): the Authorization header (Basic and Bearer/JWT), the
 * Cookie header, the proxy headers, and the headers that shape a redirect (Host, X-Forwarded-*,
 * Accept). Every answer must be 2xx/3xx or a 4xx JSON error; only a genuine credential may
 * authenticate, and as exactly the user it names.
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes, sign as rsaSign } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';

import { hostileString, isWellFormed, jsonObjectText, jsonText } from '../support/hardening-arbitraries.js';
import {
  HARDENING_INI,
  assertAlive,
  assertCouchAnswer,
  assertNoUnexpectedErrors,
  basicValue,
  crashWatch,
  property,
  prototypeGuard,
  raw,
  type HeaderList,
  type RawResponse,
} from '../support/hardening.js';
import { generateKeyPair } from '../support/key-pairs.js';
import { ADMIN, startServer, type TestServer } from '../support/server.js';
import { handMadeCookie, hexTime } from '../support/session-helpers.js';

const SECRET = randomBytes(16).toString('hex');
const HMAC_KEY = randomBytes(32);
const OTHER_HMAC_KEY = randomBytes(32);
const rsa = generateKeyPair({ type: 'rsa', modulusLength: 2048 });
const rsaPublicPem = String(rsa.publicKey.export({ type: 'spki', format: 'pem' }));
const ALL_HANDLERS = ['cookie', 'proxy', 'jwt', 'default'].map((name) => `{chttpd_auth, ${name}_authentication_handler}`).join(', ');
const ALICE = { name: 'alice', password: 'alice-pw', roles: ['staff'] };

const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The user context GET /_session reports, or undefined when the answer is an error. */
function whoFrom(res: RawResponse): { name: string | null; roles: string[]; handler?: string } | undefined {
  if (res.status !== 200) return undefined;
  return { ...res.json.userCtx, handler: res.json.info.authenticated };
}

describe('authentication entry points under hostile headers (property, HTTP)', () => {
  let server: TestServer;
  let port: number;
  let aliceSalt: string;
  let configBefore = '';
  const unpolluted = prototypeGuard();
  const crashes = crashWatch();

  before(async () => {
    server = await startServer({
      ini: [
        HARDENING_INI,
        '[chttpd]',
        `authentication_handlers = ${ALL_HANDLERS}`,
        '[chttpd_auth]',
        `secret = ${SECRET}`,
        'proxy_use_secret = true',
        '[jwt_keys]',
        `hmac:_default = ${HMAC_KEY.toString('base64')}`,
        `rsa:rk = ${rsaPublicPem.trim().replace(/\n/g, '\\n')}`,
      ].join('\n'),
    });
    port = Number(new URL(server.url).port);
    const created = await server.admin(`/_users/org.couchdb.user:${ALICE.name}`, {
      method: 'PUT',
      body: { name: ALICE.name, password: ALICE.password, roles: ALICE.roles, type: 'user' },
    });
    assert.equal(created.status, 201, created.text);
    aliceSalt = (await server.admin(`/_users/org.couchdb.user:${ALICE.name}`)).body.salt;
    // Prime the verified-password cache, so wrong guesses are compared, not re-derived.
    assert.equal((await server.request('/_session', { auth: [ALICE.name, ALICE.password] })).status, 200);
    assert.equal((await server.admin('/_session')).status, 200);
    configBefore = JSON.stringify(server.app.config.all());
  });

  after(async () => {
    try {
      await assertAlive(port, 'after the properties');
      assertNoUnexpectedErrors(server.logs);
      crashes.check();
      unpolluted();
      assert.equal(JSON.stringify(server.app.config.all()), configBefore, 'the configuration is unchanged');
    } finally {
      crashes.stop();
      await server.close();
    }
  });

  async function session(headers: HeaderList, context: string, target = '/_session'): Promise<RawResponse> {
    const res = await raw(port, { target, headers });
    assertCouchAnswer(res, context);
    return res;
  }

  test('Authorization: Basic with any bytes authenticates only the right name and password', async (t) => {
    const p = property('HTTP Authorization: Basic', 3000);
    const credentials = fc.oneof(
      fc.tuple(fc.constantFrom(ALICE.name, ADMIN[0], 'Alice', ' alice', 'alice ', 'nobody', '', '_:_'), fc.oneof(fc.constantFrom(ALICE.password, ADMIN[1], '', `${ALICE.password} `), hostileString(12).filter(isWellFormed)))
        .map(([name, password]) => ({ header: Buffer.from(basicValue(name, password)), name, password })),
      hostileString(30).filter(isWellFormed).map((rest) => ({ header: Buffer.from(`Basic ${rest.replace(/[\r\n]/g, '')}`), name: undefined, password: undefined })),
      fc.uint8Array({ maxLength: 40 }).map((bytes) => ({ header: Buffer.concat([Buffer.from('Basic '), Buffer.from(bytes.filter((b) => b !== 10 && b !== 13))]), name: undefined, password: undefined })),
      fc.uint8Array({ maxLength: 40 }).map((bytes) => ({ header: Buffer.from(`Basic ${Buffer.from(bytes).toString('base64')}`), name: undefined, password: undefined })),
    );
    await fc.assert(
      fc.asyncProperty(credentials, async ({ header, name, password }) => {
        p.count();
        const res = await session([['Authorization', header]], `Basic ${header.toString('latin1')}`);
        const who = whoFrom(res);
        if (who === undefined || who.name === null) return;
        const genuine = (name === ALICE.name && password === ALICE.password) || (name === ADMIN[0] && password === ADMIN[1]);
        assert.ok(genuine, `authenticated as ${who.name} with ${header.toString('latin1')}`);
        assert.equal(who.name, name);
      }),
      p.options,
    );
    p.report(t);
  });

  test('Cookie: any AuthSession value, forged, tampered or truncated, authenticates only when genuine', async (t) => {
    const p = property('HTTP Cookie: AuthSession', 3000);
    const genuine = (): string => handMadeCookie(ALICE.name, hexTime(nowSeconds()), SECRET, aliceSalt);
    type Mutation = { kind: 'genuine' } | { kind: 'flip'; at: number; mask: number } | { kind: 'truncate'; keep: number } | { kind: 'extend'; extra: number[] } | { kind: 'as-admin' } | { kind: 'other-secret' } | { kind: 'future' } | { kind: 'raw'; value: string };
    const mutation: fc.Arbitrary<Mutation> = fc.oneof(
      fc.constant({ kind: 'genuine' as const }),
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
      fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat({ max: 40 }) }),
      fc.record({ kind: fc.constant('extend' as const), extra: fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 8 }) }),
      fc.constantFrom({ kind: 'as-admin' as const }, { kind: 'other-secret' as const }, { kind: 'future' as const }),
      fc.oneof(hostileString(40), fc.stringMatching(/^[A-Za-z0-9_-]{0,60}$/)).filter(isWellFormed).map((value) => ({ kind: 'raw' as const, value: value.replace(/[\r\n]/g, '') })),
    );
    const wrapping = fc.constantFrom((v: string) => `AuthSession=${v}`, (v: string) => `a=b; AuthSession=${v}; c=d`, (v: string) => `AuthSession="${v}"`, (v: string) => ` AuthSession = ${v} `, (v: string) => `AuthSession=${v}; AuthSession=${genuine()}`);
    await fc.assert(
      fc.asyncProperty(mutation, wrapping, async (m, wrap) => {
        p.count();
        const value = genuine();
        const bytes = Buffer.from(value, 'base64url');
        // `alice:TIMEHEX:` then the 32-byte HMAC-SHA256 (which may itself contain colons).
        const macStart = bytes.length - 32;
        let presented = value;
        let shouldAuthenticate = false;
        switch (m.kind) {
          case 'genuine':
            shouldAuthenticate = true;
            break;
          case 'flip': {
            const copy = Buffer.from(bytes);
            copy[m.at % copy.length] ^= m.mask;
            presented = b64url(copy);
            break;
          }
          case 'truncate':
            presented = b64url(bytes.subarray(0, Math.min(macStart + m.keep, bytes.length - 1)));
            break;
          case 'extend':
            presented = b64url(Buffer.concat([bytes, Buffer.from(m.extra)]));
            break;
          case 'as-admin':
            presented = b64url(Buffer.concat([Buffer.from(`${ADMIN[0]}:`), bytes.subarray(ALICE.name.length + 1)]));
            break;
          case 'other-secret':
            presented = handMadeCookie(ALICE.name, hexTime(nowSeconds()), `${SECRET}x`, aliceSalt);
            break;
          case 'future':
            presented = b64url(Buffer.concat([Buffer.from(`${ALICE.name}:${hexTime(nowSeconds() + 3600)}:`), bytes.subarray(macStart)]));
            break;
          case 'raw':
            presented = m.value;
            break;
        }
        const header = wrap(presented);
        const res = await session([['Cookie', header]], `Cookie ${header}`);
        const who = whoFrom(res);
        if (shouldAuthenticate) {
          assert.equal(who?.name, ALICE.name, `the genuine cookie authenticates: ${header}`);
          return;
        }
        if (who === undefined || who.name === null) return;
        // The only way in is the genuine value (the first AuthSession counts; quotes are unwrapped).
        assert.equal(presented, value, `authenticated as ${who.name} with a ${m.kind} cookie: ${header}`);
      }),
      p.options,
    );
    p.report(t);
  });

  test('proxy headers: any user name, roles and token; only the HMAC of the name authenticates', async (t) => {
    const p = property('HTTP proxy headers (X-Auth-CouchDB-*)', 2500);
    const printable = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,20}[\x21-\x7e]$/);
    const token = (name: string, algorithm: string): string => createHmac(algorithm, SECRET).update(name, 'utf8').digest('hex');
    const headerValue = fc.oneof(printable.map((s) => Buffer.from(s)), hostileString(20).filter(isWellFormed).map((s) => Buffer.from(s.replace(/[\r\n]/g, ''), 'utf8')), fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b.filter((x) => x !== 10 && x !== 13))));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(printable, fc.constantFrom('root', 'alice', '_admin', '')),
        headerValue,
        fc.oneof(
          fc.constantFrom('sha256', 'sha1').map((algorithm) => ({ algorithm, genuine: true as boolean, value: undefined as Buffer | undefined })),
          headerValue.map((value) => ({ algorithm: 'none', genuine: false as boolean, value: value as Buffer | undefined })),
          fc.constant({ algorithm: 'none', genuine: false as boolean, value: undefined as Buffer | undefined }),
        ),
        async (name, roles, choice) => {
          p.count();
          const headers: [string, string | Buffer][] = [['X-Auth-CouchDB-UserName', name], ['X-Auth-CouchDB-Roles', roles]];
          const tokenValue = choice.genuine ? token(name, choice.algorithm) : choice.value;
          if (tokenValue !== undefined) headers.push(['X-Auth-CouchDB-Token', tokenValue]);
          const res = await session(headers, `proxy ${name} ${roles.toString('latin1')}`);
          const who = whoFrom(res);
          if (who === undefined || who.name === null) return;
          assert.equal(who.handler, 'proxy');
          assert.ok(choice.genuine, `authenticated as ${who.name} without the right token`);
          assert.equal(who.name, name);
          const expectedRoles = roles.toString('latin1').split(',').map((role) => role.trim()).filter((role) => role !== '');
          assert.deepEqual(who.roles, expectedRoles);
        },
      ),
      p.options,
    );
    p.report(t);
  });

  test('Authorization: Bearer with any header, payload and signature authenticates only a genuine, valid token', async (t) => {
    const p = property('HTTP Authorization: Bearer (JWT)', 3000);
    const header = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('{"alg":"HS256"}', '{"alg":"HS256","typ":"JWT"}', '{"alg":"RS256","kid":"rk"}', '{"alg":"none"}', '{"alg":"HS256","kid":"rk"}', '{"alg":"RS256"}', '{"alg":"HS256","kid":"_default"}', '{"alg":"HS256","__proto__":{"alg":"none"}}', '{"alg":"HS256","alg":"none"}', '{"alg":"none","alg":"HS256"}', '{"alg":"HS512"}', '{"alg":"ES256"}', '{"alg":"HS256","crit":["exp"]}', '{"alg":"HS256","kid":1}') },
      { weight: 1, arbitrary: jsonText },
    );
    const exp = (): number => nowSeconds() + 600;
    const payload = fc.oneof(
      { weight: 3, arbitrary: fc.record({
        sub: fc.oneof(fc.constantFrom('alice', 'root', '', 'mallory'), fc.constantFrom(42, null, ['a'])),
        exp: fc.constantFrom('valid', 'past', 'string', 'missing', 'huge'),
        roles: fc.constantFrom('none', '["_admin"]', '"a, b"', '42', '{"a":1}', '[1]'),
        extra: fc.constantFrom('', ',"__proto__":{"roles":["_admin"]}', ',"constructor":{"prototype":{"x":1}}', ',"_couchdb.roles":["_admin"]'),
      }).map(({ sub, exp: e, roles, extra }) => {
        const expText = { valid: String(exp()), past: String(nowSeconds() - 10), string: '"soon"', missing: undefined, huge: '1e999' }[e];
        const members = [`"sub":${JSON.stringify(sub)}`];
        if (expText !== undefined) members.push(`"exp":${expText}`);
        if (roles !== 'none') members.push(`"_couchdb.roles":${roles}`);
        return `{${members.join(',')}${extra}}`;
      }) },
      { weight: 1, arbitrary: jsonObjectText },
    );
    type Signer = 'hs256' | 'hs256-other-key' | 'rs256' | 'hs256-with-rsa-public-pem' | 'empty' | 'random';
    const signer = fc.constantFrom<Signer>('hs256', 'hs256', 'rs256', 'hs256-other-key', 'hs256-with-rsa-public-pem', 'empty', 'random');
    const tamper = fc.constantFrom('none', 'none', 'none', 'payload', 'header', 'signature');
    await fc.assert(
      fc.asyncProperty(header, payload, signer, tamper, fc.uint8Array({ minLength: 1, maxLength: 40 }), async (h, pl, how, change, noise) => {
        p.count();
        const signingInput = `${b64url(h)}.${b64url(pl)}`;
        let signature: string;
        switch (how) {
          case 'hs256': signature = b64url(createHmac('sha256', HMAC_KEY).update(signingInput).digest()); break;
          case 'hs256-other-key': signature = b64url(createHmac('sha256', OTHER_HMAC_KEY).update(signingInput).digest()); break;
          case 'rs256': signature = b64url(rsaSign('sha256', Buffer.from(signingInput), rsa.privateKey)); break;
          case 'hs256-with-rsa-public-pem': signature = b64url(createHmac('sha256', rsaPublicPem).update(signingInput).digest()); break;
          case 'empty': signature = ''; break;
          default: signature = b64url(Buffer.from(noise));
        }
        let token = `${signingInput}.${signature}`;
        const [eh, ep, es] = token.split('.') as [string, string, string];
        if (change === 'payload') token = `${eh}.${b64url(`${Buffer.from(ep, 'base64url').toString('utf8').replace(/"sub":"[^"]*"/, '"sub":"root"')} `)}.${es}`;
        if (change === 'header') token = `${b64url(h.replace(/HS256/, 'none').replace(/RS256/, 'HS256'))}.${ep}.${es}`;
        if (change === 'signature') token = `${eh}.${ep}.${b64url(Buffer.from(Buffer.from(es, 'base64url').map((byte, i) => (i === 0 ? byte ^ 1 : byte))))}`;
        const res = await session([['Authorization', `Bearer ${token}`]], `Bearer ${h} ${pl} ${how} ${change}`);
        const who = whoFrom(res);
        if (who === undefined || who.name === null) return;
        assert.equal(who.handler, 'jwt');
        const parsedHeader = JSON.parse(h) as Record<string, unknown>;
        const alg = parsedHeader['alg'];
        const genuine = change === 'none' && ((how === 'hs256' && alg === 'HS256' && (parsedHeader['kid'] === undefined || parsedHeader['kid'] === '_default')) || (how === 'rs256' && alg === 'RS256' && parsedHeader['kid'] === 'rk'));
        assert.ok(genuine, `authenticated as ${who.name} by a ${how} token with ${change} changed: ${h} ${pl}`);
        const claims = JSON.parse(pl) as Record<string, unknown>;
        assert.equal(who.name, claims['sub']);
        assert.ok(typeof claims['exp'] === 'number' && claims['exp'] > nowSeconds() - 5, 'exp is required and in the future');
      }),
      p.options,
    );
    p.report(t);
  });

  test('Host, X-Forwarded-Host/-Proto/-For and Accept: every Location is a well-formed same-server URL', async (t) => {
    const p = property('HTTP redirect headers (Host, X-Forwarded-*, Accept)', 2000);
    const hostish = fc.oneof(
      fc.constantFrom('couch.example:5984', 'evil.example', 'evil.example/x', 'a@evil.example', 'evil.example\\x', '[::1]:5984', 'x y', '', 'couch.example, evil.example', 'javascript:alert(1)', '%2F%2Fevil', 'evil.example?x', 'evil.example#x'),
      hostileString(20).filter(isWellFormed).map((s) => s.replace(/[\r\n]/g, '')),
    );
    await fc.assert(
      fc.asyncProperty(
        hostish,
        fc.option(hostish, { nil: undefined }),
        fc.option(fc.constantFrom('https', 'http', 'ftp', 'https, http', 'javascript'), { nil: undefined }),
        fc.option(fc.constantFrom('10.1.2.3', '::1', 'garbage', '1.1.1.1, 2.2.2.2'), { nil: undefined }),
        fc.constantFrom('login-next', 'login-fail', 'browser-401'),
        async (host, forwardedHost, forwardedProto, forwardedFor, kind) => {
          p.count();
          const headers: [string, string][] = [['Host', host]];
          if (forwardedHost !== undefined) headers.push(['X-Forwarded-Host', forwardedHost]);
          if (forwardedProto !== undefined) headers.push(['X-Forwarded-Proto', forwardedProto]);
          if (forwardedFor !== undefined) headers.push(['X-Forwarded-For', forwardedFor]);
          let res: RawResponse;
          if (kind === 'browser-401') {
            headers.push(['Accept', 'text/html,application/xhtml+xml,*/*;q=0.8']);
            res = await raw(port, { target: '/_all_dbs', headers });
          } else {
            headers.push(['Content-Type', 'application/json']);
            const body = JSON.stringify({ name: ALICE.name, password: kind === 'login-next' ? ALICE.password : 'wrong' });
            res = await raw(port, { method: 'POST', target: kind === 'login-next' ? '/_session?next=/app/page' : '/_session?fail=/login', headers, body });
          }
          assertCouchAnswer(res, `${kind} ${JSON.stringify(headers)}`);
          const locations = res.headers.get('location') ?? [];
          if (res.status !== 302) return;
          assert.equal(locations.length, 1);
          const location = locations[0]!;
          assert.match(location, /^https?:\/\/[A-Za-z0-9.\-:[\]]+\/[\x21-\x7e]*$/, `Location ${location}`);
          const url = new URL(location);
          assert.ok(url.pathname.startsWith(kind === 'browser-401' ? '/_utils/session.html' : kind === 'login-next' ? '/app/page' : '/login'), location);
          // Only one host, taken from a header the client may set: never a path or credentials.
          assert.equal(url.username + url.password, '');
        },
      ),
      p.options,
    );
    p.report(t);
  });
});
