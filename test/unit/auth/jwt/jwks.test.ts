import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';

import { parseJwk, parseJwks } from '../../../../src/auth/jwt/jwk.js';
import { JwksStore, type JwksOptions, parseJwksUrls } from '../../../../src/auth/jwt/jwks.js';
import { JwtHandler } from '../../../../src/auth/jwt/jwt-handler.js';
import { VerificationKey } from '../../../../src/auth/jwt/verification-key.js';
import { type JwksServer, startJwksServer } from '../../../support/jwks-server.js';
import {
  badRequest,
  bearer,
  clock,
  ecPair,
  edPair,
  HMAC_SECRET,
  jwk,
  makeConfig,
  memoryLog,
  NOW,
  pemOneLine,
  rejectsWith,
  rsaPair,
  sign,
} from './fixtures.js';

const INTERVAL_MS = 300_000;
const TTL_MS = 3_600_000;

async function server(t: TestContext, keys: readonly object[]): Promise<JwksServer> {
  const started = await startJwksServer(keys);
  t.after(() => started.close());
  return started;
}

function store(urls: string[], overrides: Partial<JwksOptions> = {}) {
  const time = clock();
  const { log, lines } = memoryLog();
  const jwks = new JwksStore({
    urls,
    refreshIntervalMs: INTERVAL_MS,
    cacheTtlMs: TTL_MS,
    log,
    now: time.now,
    ...overrides,
  });
  return { jwks, time, lines };
}

const rsaA = () => jwk(rsaPair('a').publicKey, { kid: 'A', use: 'sig', alg: 'RS256' });
const rsaB = () => jwk(rsaPair('b').publicKey, { kid: 'B', use: 'sig', alg: 'RS256' });
const rsaC = () => jwk(rsaPair('c').publicKey, { kid: 'C' });

describe('parseJwk / parseJwks / parseJwksUrls', () => {
  test('RSA, EC and OKP public keys with a kid are accepted', () => {
    for (const [entry, kind] of [
      [rsaA(), 'rsa'],
      [jwk(ecPair('P-384').publicKey, { kid: 'e', alg: 'ES384' }), 'ec'],
      [jwk(edPair().publicKey, { kid: 'o', alg: 'EdDSA', key_ops: ['verify'] }), 'okp'],
    ] as const) {
      const parsed = parseJwk(entry);
      assert.ok(typeof parsed === 'object', String(parsed));
      assert.equal(parsed.kind, kind);
      assert.ok(parsed.key instanceof VerificationKey);
    }
  });

  test('symmetric, private, mislabelled, kid-less and weak keys are refused', () => {
    const rsa = rsaPair('a');
    const cases: [unknown, RegExp][] = [
      [{ kty: 'oct', kid: 'h', k: HMAC_SECRET.toString('base64url') }, /symmetric/],
      [{ ...rsaA(), kid: undefined }, /no kid/],
      [{ ...rsaA(), kid: '' }, /no kid/],
      [{ ...rsaA(), use: 'enc' }, /use "enc"/],
      [{ ...rsaA(), key_ops: ['sign'] }, /key_ops/],
      [{ ...jwk(rsa.privateKey, { kid: 'p' }) }, /private key material/],
      [{ ...rsaA(), alg: 'ES256' }, /alg "ES256" does not fit kty RSA/],
      [{ ...rsaA(), alg: 'HS256' }, /alg "HS256" does not fit/],
      [{ ...rsaA(), alg: 'none' }, /alg "none" does not fit/],
      [jwk(ecPair('P-256').publicKey, { kid: 'e', alg: 'ES384' }), /alg ES384 does not fit curve P-256/],
      [{ ...rsaA(), kty: 'AKP' }, /unsupported kty/],
      [{ ...rsaA(), n: undefined }, /member "n" missing/],
      [{ ...rsaA(), n: 'AAAA' }, /(does not decode|fewer than 2048)/],
      [jwk(rsaPair('short', 1024).publicKey, { kid: 's' }), /fewer than 2048/],
      ['not an object', /not an object/],
    ];
    for (const [entry, problem] of cases) {
      const parsed = parseJwk(entry);
      assert.equal(typeof parsed, 'string', JSON.stringify(entry).slice(0, 60));
      assert.match(parsed as string, problem);
    }
  });

  test('a document without a keys array is not a key set; bad keys are listed, good ones kept', () => {
    assert.equal(parseJwks({ not: 'keys' }), undefined);
    assert.equal(parseJwks([]), undefined);
    assert.equal(parseJwks(null), undefined);
    const parsed = parseJwks({ keys: [rsaA(), { kty: 'oct', kid: 'h', k: 'AA' }] });
    assert.deepEqual(parsed?.keys.map((key) => key.kid), ['A']);
    assert.deepEqual(parsed?.skipped, ['kid "h": a symmetric key, never accepted from a JWKS']);
  });

  test('jwks_url: comma-separated http(s) URLs; problems are reported, not fatal', () => {
    const { urls, problems } = parseJwksUrls(
      ' https://idp.example/jwks , http://127.0.0.1:8080/k,, ftp://x/y, not a url, http://idp.example/plain, https://idp.example/jwks',
    );
    assert.deepEqual(urls, ['https://idp.example/jwks', 'http://127.0.0.1:8080/k', 'http://idp.example/plain']);
    assert.equal(problems.length, 3);
    assert.match(problems.join('\n'), /ftp:\/\/x\/y is neither http nor https/);
    assert.match(problems.join('\n'), /"not a url" is not a URL/);
    assert.match(problems.join('\n'), /http:\/\/idp.example\/plain uses plain http/);
    assert.deepEqual(parseJwksUrls(undefined), { urls: [], problems: [] });
    const withCredentials = parseJwksUrls('https://user:hunter2@idp.example/jwks?token=abc');
    assert.deepEqual(withCredentials.urls, []);
    assert.match(withCredentials.problems[0], /https:\/\/idp.example\/jwks carries credentials/);
    assert.doesNotMatch(withCredentials.problems[0], /hunter2|token=abc/);
  });
});

describe('JwksStore', () => {
  test('the first lookup fetches; cached kids cost no request', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks } = store([idp.url]);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    assert.equal(idp.requests, 1);
  });

  test('a key is found only for its kind and, when it names one, its alg', async (t) => {
    const idp = await server(t, [rsaA(), rsaC()]);
    const { jwks } = store([idp.url]);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    assert.equal(await jwks.find('rsa', 'A', 'PS256'), undefined);
    assert.ok(await jwks.find('rsa', 'C', 'PS512'));
    assert.equal(await jwks.find('ec', 'A', 'ES256'), undefined);
    // HMAC never comes from a JWKS, so it does not even ask
    const before = idp.requests;
    assert.equal(await jwks.find('hmac', 'A', 'HS256'), undefined);
    assert.equal(idp.requests, before);
  });

  test('key rotation is picked up through an unknown kid once the refresh interval has passed', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks, time } = store([idp.url]);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    idp.setKeys([rsaA(), rsaB()]);
    time.advance(INTERVAL_MS - 1);
    assert.equal(await jwks.find('rsa', 'B', 'RS256'), undefined);
    assert.equal(idp.requests, 1);
    time.advance(1);
    assert.ok(await jwks.find('rsa', 'B', 'RS256'));
    assert.equal(idp.requests, 2);
  });

  test('two unknown kids within the interval cause one fetch, in sequence or at once', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks, time } = store([idp.url]);
    await jwks.find('rsa', 'A', 'RS256');
    time.advance(INTERVAL_MS);
    assert.equal(await jwks.find('rsa', 'X', 'RS256'), undefined);
    assert.equal(await jwks.find('rsa', 'Y', 'RS256'), undefined);
    assert.equal(idp.requests, 2);
    time.advance(INTERVAL_MS);
    const both = await Promise.all([jwks.find('rsa', 'X', 'RS256'), jwks.find('rsa', 'Y', 'RS256')]);
    assert.deepEqual(both, [undefined, undefined]);
    assert.equal(idp.requests, 3);
    // callers arriving while a fetch is under way wait for it instead of giving up
    idp.setKeys([rsaA(), rsaB()]);
    time.advance(INTERVAL_MS);
    const waited = await Promise.all([jwks.find('rsa', 'B', 'RS256'), jwks.find('rsa', 'B', 'RS256')]);
    assert.ok(waited[0] && waited[1]);
    assert.equal(idp.requests, 4);
  });

  for (const mode of ['down', 'error', 'garbage'] as const) {
    test(`provider ${mode}: cached kids keep working, unknown kids are not found, one warning`, async (t) => {
      const idp = await server(t, [rsaA()]);
      const { jwks, time, lines } = store([idp.url]);
      assert.ok(await jwks.find('rsa', 'A', 'RS256'));
      idp.setMode(mode);
      for (let i = 0; i < 3; i++) {
        time.advance(INTERVAL_MS);
        assert.equal(await jwks.find('rsa', 'B', 'RS256'), undefined);
        assert.ok(await jwks.find('rsa', 'A', 'RS256'));
      }
      assert.equal(idp.requests, 4);
      assert.equal(lines.filter((line) => line.includes('cannot fetch JWKS')).length, 1);
      idp.setMode('up');
      idp.setKeys([rsaA(), rsaB()]);
      time.advance(INTERVAL_MS);
      assert.ok(await jwks.find('rsa', 'B', 'RS256'));
      assert.ok(lines.some((line) => line.includes('answers again')));
    });
  }

  test('a provider down from the start: nothing found, retried only once per interval', async (t) => {
    const idp = await server(t, [rsaA()]);
    idp.setMode('down');
    const { jwks, time } = store([idp.url]);
    assert.equal(await jwks.find('rsa', 'A', 'RS256'), undefined);
    assert.equal(await jwks.find('rsa', 'A', 'RS256'), undefined);
    assert.equal(idp.requests, 1);
    idp.setMode('up');
    time.advance(INTERVAL_MS);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
  });

  test('a provider that hangs is given up after the timeout', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks, time, lines } = store([idp.url], { timeoutMs: 100 });
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    idp.setMode('hang');
    time.advance(INTERVAL_MS);
    const started = Date.now();
    assert.equal(await jwks.find('rsa', 'B', 'RS256'), undefined);
    assert.ok(Date.now() - started < 3000);
    assert.ok(lines.some((line) => /cannot fetch JWKS .*timed out/.test(line)));
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
  });

  test('after the cache TTL a background refresh runs; the cached key answers meanwhile', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks, time } = store([idp.url]);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    idp.setKeys([rsaA(), rsaB()]);
    time.advance(TTL_MS - 1);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    await jwks.settled();
    assert.equal(idp.requests, 1);
    time.advance(1);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    await jwks.settled();
    assert.equal(idp.requests, 2);
    // B arrived with the background refresh: found without another request
    assert.ok(await jwks.find('rsa', 'B', 'RS256'));
    assert.equal(idp.requests, 2);
  });

  test('a stale cache whose refresh fails keeps serving the old keys', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { jwks, time } = store([idp.url]);
    await jwks.find('rsa', 'A', 'RS256');
    idp.setMode('down');
    time.advance(TTL_MS * 5);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    await jwks.settled();
    assert.equal(idp.requests, 2);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
  });

  test('a refresh that drops or replaces a key reports it; one that only adds does not', async (t) => {
    const idp = await server(t, [rsaA()]);
    let changes = 0;
    const { jwks, time } = store([idp.url], { onKeysChanged: () => changes++ });
    await jwks.find('rsa', 'A', 'RS256');
    idp.setKeys([rsaA(), rsaB()]);
    time.advance(INTERVAL_MS);
    await jwks.find('rsa', 'B', 'RS256');
    assert.equal(changes, 0);
    idp.setKeys([rsaB()]);
    time.advance(INTERVAL_MS);
    await jwks.find('rsa', 'Z', 'RS256');
    assert.equal(changes, 1);
    assert.equal(await jwks.find('rsa', 'A', 'RS256'), undefined);
  });

  test('several URLs: keys from each; one being down does not hide the other', async (t) => {
    const one = await server(t, [rsaA()]);
    const two = await server(t, [rsaB()]);
    two.setMode('down');
    const { jwks, time } = store([one.url, two.url]);
    assert.ok(await jwks.find('rsa', 'A', 'RS256'));
    assert.equal(await jwks.find('rsa', 'B', 'RS256'), undefined);
    two.setMode('up');
    time.advance(INTERVAL_MS);
    assert.ok(await jwks.find('rsa', 'B', 'RS256'));
  });

  test('logs name the URL without credentials and never carry key material', async (t) => {
    const idp = await server(t, [rsaA(), { kty: 'oct', kid: 'h', k: 'c2VjcmV0LXNlY3JldA' }]);
    const { jwks, time, lines } = store([`${idp.url}?token=abc`]);
    await jwks.find('rsa', 'A', 'RS256');
    idp.setMode('down');
    time.advance(INTERVAL_MS);
    await jwks.find('rsa', 'Q', 'RS256');
    assert.ok(lines.length >= 2);
    const text = lines.join('\n');
    for (const secret of ['token=abc', 'c2VjcmV0LXNlY3JldA', String(rsaA().n).slice(0, 20)]) {
      assert.ok(!text.includes(secret), secret);
    }
  });
});

describe('JwtHandler with jwks_url', () => {
  const VALID = { sub: 'alice', exp: NOW + 86_400 };

  async function handlerFor(idp: JwksServer, extra = '') {
    const config = await makeConfig(`[jwt_auth]\njwks_url = ${idp.url}\n${extra}`);
    const time = clock();
    const { log } = memoryLog();
    const handler = new JwtHandler(config, log, { now: time.now });
    return { handler, time, config };
  }

  test('a token whose kid is published verifies; rotation is picked up through the unknown kid', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { handler, time } = await handlerFor(idp, 'token_cache_max_age = 86400\n');
    const a = await sign({ alg: 'RS256', kid: 'A' }, VALID, rsaPair('a').privateKey);
    assert.deepEqual(await handler.authenticate(bearer(a)), { userCtx: { name: 'alice', roles: [] } });
    idp.setKeys([rsaB()]);
    time.advance(INTERVAL_MS);
    const b = await sign({ alg: 'RS256', kid: 'B' }, VALID, rsaPair('b').privateKey);
    assert.equal((await handler.authenticate(bearer(b)))?.userCtx.name, 'alice');
    // A was withdrawn by the provider: the cached result for its token (max age 1 day) is gone too
    await rejectsWith(handler.authenticate(bearer(a)), ...badRequest('Unknown kid'));
  });

  test('static [jwt_keys] win over the JWKS for the same kid, without asking the provider', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { handler } = await handlerFor(idp, `[jwt_keys]\nrsa:A = ${pemOneLine(rsaPair('c').publicKey)}\n`);
    const byJwksKey = await sign({ alg: 'RS256', kid: 'A' }, VALID, rsaPair('a').privateKey);
    await rejectsWith(handler.authenticate(bearer(byJwksKey)), ...badRequest('Bad signature'));
    const byStaticKey = await sign({ alg: 'RS256', kid: 'A' }, VALID, rsaPair('c').privateKey);
    assert.equal((await handler.authenticate(bearer(byStaticKey)))?.userCtx.name, 'alice');
    assert.equal(idp.requests, 0);
  });

  test('the provider down: cached kids still serve new tokens; unknown kids are Unknown kid', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { handler, time } = await handlerFor(idp);
    await handler.authenticate(bearer(await sign({ alg: 'RS256', kid: 'A' }, VALID, rsaPair('a').privateKey)));
    idp.setMode('down');
    time.advance(TTL_MS * 2);
    const fresh = await sign({ alg: 'RS256', kid: 'A' }, { ...VALID, sub: 'bob' }, rsaPair('a').privateKey);
    assert.equal((await handler.authenticate(bearer(fresh)))?.userCtx.name, 'bob');
    const unknown = await sign({ alg: 'RS256', kid: 'B' }, VALID, rsaPair('b').privateKey);
    await rejectsWith(handler.authenticate(bearer(unknown)), ...badRequest('Unknown kid'));
  });

  test('no confusion: an HS256 token naming a published RSA kid is Unknown kid; no kid never uses the JWKS', async (t) => {
    const idp = await server(t, [rsaA()]);
    const { handler } = await handlerFor(idp);
    const forged = await sign({ alg: 'HS256', kid: 'A' }, VALID, Buffer.from(pemOneLine(rsaPair('a').publicKey)));
    await rejectsWith(handler.authenticate(bearer(forged)), ...badRequest('Unknown kid'));
    const noKid = await sign({ alg: 'RS256' }, VALID, rsaPair('a').privateKey);
    await rejectsWith(handler.authenticate(bearer(noKid)), ...badRequest('Unknown kid'));
    assert.equal(idp.requests, 0);
  });

  test('changing jwks_url switches providers without a restart; other [jwt_auth] changes keep the cache', async (t) => {
    const first = await server(t, [rsaA()]);
    const second = await server(t, [rsaB()]);
    const { handler, config } = await handlerFor(first);
    const a = await sign({ alg: 'RS256', kid: 'A' }, VALID, rsaPair('a').privateKey);
    assert.ok(await handler.authenticate(bearer(a)));
    await config.set('jwt_auth', 'roles_claim_name', 'groups');
    assert.ok(await handler.authenticate(bearer(a)));
    assert.equal(first.requests, 1);
    await config.set('jwt_auth', 'jwks_url', second.url);
    await rejectsWith(handler.authenticate(bearer(a)), ...badRequest('Unknown kid'));
    const b = await sign({ alg: 'RS256', kid: 'B' }, VALID, rsaPair('b').privateKey);
    assert.ok(await handler.authenticate(bearer(b)));
  });
});
