import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { JwtHandler, type JwtHandlerOptions } from '../../../../src/auth/jwt/jwt-handler.js';
import { type SignatureVerifier, verifySignature } from '../../../../src/auth/jwt/signature.js';
import {
  b64url,
  badRequest,
  bearer,
  clock,
  ecPair,
  edPair,
  handToken,
  HMAC_SECRET,
  HMAC_SECRET_B64,
  makeConfig,
  memoryLog,
  NOW,
  NOW_MS,
  pem,
  pemOneLine,
  rejectsWith,
  rsaPair,
  sign,
  unauthorized,
} from './fixtures.js';

const HS_INI = `[jwt_keys]\nhmac:_default = ${HMAC_SECRET_B64}\n`;
const VALID = { sub: 'alice', exp: NOW + 60, '_couchdb.roles': ['r1', 'r2'] };

async function setup(ini: string, options: JwtHandlerOptions = {}) {
  const config = await makeConfig(ini);
  const time = clock();
  const { log, lines } = memoryLog();
  const handler = new JwtHandler(config, log, { now: time.now, ...options });
  return { config, handler, time, lines };
}

function counting(): { verifier: SignatureVerifier; calls: () => number } {
  let calls = 0;
  return {
    verifier: (token, key, alg) => {
      calls++;
      return verifySignature(token, key, alg);
    },
    calls: () => calls,
  };
}

describe('JwtHandler: which requests it takes', () => {
  test('only Authorization values starting with exactly "Bearer " are its business', async () => {
    const { handler } = await setup(HS_INI);
    const token = await sign({ alg: 'HS256' }, VALID, HMAC_SECRET);
    const anonymous = { ...bearer(token), headers: {} };
    assert.equal(await handler.authenticate(anonymous), undefined);
    for (const scheme of ['bearer ', 'BEARER ', 'Bearer', 'Basic ', 'Token ']) {
      assert.equal(await handler.authenticate(bearer(token, scheme)), undefined, scheme);
    }
    assert.deepEqual(await handler.authenticate(bearer(token)), { userCtx: { name: 'alice', roles: ['r1', 'r2'] } });
    handler.close();
  });

  test('the credential expires at the token\'s exp; a token without one does not expire', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = {iss, "hello"}\n`);
    const token = await sign({ alg: 'HS256' }, { ...VALID, iss: 'hello' }, HMAC_SECRET);
    const outcome = await handler.authenticate(bearer(token));
    assert.ok(outcome);
    assert.equal(handler.credentialExpiry(bearer(token)), VALID.exp * 1000);
    const lasting = await sign({ alg: 'HS256' }, { sub: 'alice', iss: 'hello' }, HMAC_SECRET);
    assert.ok(await handler.authenticate(bearer(lasting)));
    assert.equal(handler.credentialExpiry(bearer(lasting)), undefined);
    handler.close();
  });
});

describe('JwtHandler: validation order and errors (reference §6.2)', () => {
  test('row 1: not exactly three parts is 400 Malformed token', async () => {
    const { handler } = await setup(HS_INI);
    for (const token of ['', 'abc', 'a.b', 'a.b.c.d', '...']) {
      await rejectsWith(handler.authenticate(bearer(token)), ...badRequest('Malformed token'));
    }
  });

  test('row 2: unknown or duplicate required_claims is 500 misconfigured_server, logged once', async () => {
    const { handler, lines } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = exp, sub\n`);
    const token = await sign({ alg: 'HS256' }, VALID, HMAC_SECRET);
    await rejectsWith(handler.authenticate(bearer(token)), 500, 'misconfigured_server', 'JWT is not configured correctly');
    await rejectsWith(handler.authenticate(bearer(token)), 500, 'misconfigured_server', 'JWT is not configured correctly');
    assert.equal(lines.filter((line) => line.includes('required_claims')).length, 1);
    // row 1 still comes first
    await rejectsWith(handler.authenticate(bearer('a.b')), ...badRequest('Malformed token'));
  });

  test('row 2: alg listed (it is always added) is a duplicate', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = alg\n`);
    const token = await sign({ alg: 'HS256' }, VALID, HMAC_SECRET);
    await rejectsWith(handler.authenticate(bearer(token)), 500, 'misconfigured_server', 'JWT is not configured correctly');
  });

  test('rows 1/3: CouchDB jwtf vectors and other undecodable headers are 400 Malformed token', async () => {
    const { handler } = await setup(HS_INI);
    const invalidUtf8 = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url');
    for (const token of ['0.0.0', 'fQ.fQ.fQ', 'ew.ew.ew', 'a.b.c.d', `!!.${b64url(VALID)}.x`, `${invalidUtf8}.e30.x`, `${b64url({ alg: 'HS256' })}=.e30.x`,
      // 21 characters: Node would drop the dangling one and decode a valid header
      `${b64url({ alg: 'HS256' })}A.e30.x`,
      // Node would skip the stray characters and decode a valid header
      `eyJh!bGci!OiJIUzI1NiJ9.${b64url(VALID)}.x`,
      `${b64url({ alg: 'HS256', kid: '\u00fb\u00ff' })}+/.e30.x`]) {
      await rejectsWith(handler.authenticate(bearer(token)), ...badRequest('Malformed token'));
    }
  });

  test('row 3b: a header that is JSON but not an object is 400 Not an object', async () => {
    const { handler } = await setup(HS_INI);
    for (const header of ['[]', '"HS256"', '42', 'null']) {
      await rejectsWith(handler.authenticate(bearer(handToken(header, VALID))), ...badRequest('Not an object'));
    }
  });

  test('row 4: typ is checked only when required, before alg', async () => {
    const required = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = exp, typ\n`);
    await rejectsWith(required.handler.authenticate(bearer(handToken({}, VALID))), ...badRequest('Missing typ header parameter'));
    await rejectsWith(
      required.handler.authenticate(bearer(handToken({ typ: 'NOPE', alg: 'HS256' }, VALID))),
      ...badRequest('Invalid typ header parameter'),
    );
    const typed = await sign({ alg: 'HS256', typ: 'JWT' }, VALID, HMAC_SECRET);
    assert.equal((await required.handler.authenticate(bearer(typed)))?.userCtx.name, 'alice');

    const ignored = await setup(HS_INI);
    const odd = await sign({ alg: 'HS256', typ: 'NOPE' }, VALID, HMAC_SECRET);
    assert.equal((await ignored.handler.authenticate(bearer(odd)))?.userCtx.name, 'alice');
  });

  test('row 5: alg missing, none, unknown or not a string; checked before the payload', async () => {
    const { handler } = await setup(HS_INI);
    await rejectsWith(handler.authenticate(bearer(handToken({ typ: 'JWT' }, VALID))), ...badRequest('Missing alg header parameter'));
    for (const alg of ['none', 'None', 'NOPE', 'HS256 ', 'hs256', 'ES256K', 'RS1', 'Ed25519', 42, null]) {
      await rejectsWith(
        handler.authenticate(bearer(handToken({ alg }, VALID))),
        ...badRequest('Invalid alg header parameter'),
      );
    }
    await rejectsWith(
      handler.authenticate(bearer(`${b64url({ alg: 'none' })}.${b64url(VALID)}.`)),
      ...badRequest('Invalid alg header parameter'),
    );
    await rejectsWith(handler.authenticate(bearer(handToken({ alg: 'none' }, 'not json'))), ...badRequest('Invalid alg header parameter'));
  });

  test('row 6: an undecodable payload is Malformed token, a non-object one Not an object', async () => {
    const { handler } = await setup(HS_INI);
    const header = b64url({ alg: 'HS256' });
    await rejectsWith(handler.authenticate(bearer(`${header}.!!.x`)), ...badRequest('Malformed token'));
    await rejectsWith(handler.authenticate(bearer(`${header}.${b64url('{"sub":')}.x`)), ...badRequest('Malformed token'));
    await rejectsWith(handler.authenticate(bearer(`${header}..x`)), ...badRequest('Malformed token'));
    await rejectsWith(handler.authenticate(bearer(`${header}.${b64url('["sub"]')}.x`)), ...badRequest('Not an object'));
  });

  test('rows 7–10: required claims, each in turn, before the key and the signature', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = exp, nbf, iat, {iss, "hello"}\n`);
    const header = { alg: 'HS256' };
    const full = { sub: 'alice', iss: 'hello', iat: NOW, nbf: NOW - 10, exp: NOW + 10 };
    const cases: [Record<string, unknown>, [number, string, string]][] = [
      [{ ...full, iss: undefined }, badRequest('Missing iss claim')],
      [{ ...full, iss: 'goodbye' }, badRequest('Invalid iss claim')],
      [{ ...full, iat: undefined }, badRequest('Missing iat claim')],
      [{ ...full, iat: 'hello' }, badRequest('Invalid iat claim')],
      [{ ...full, nbf: undefined }, badRequest('Missing nbf claim')],
      [{ ...full, nbf: NOW * 2 }, unauthorized('nbf not in past')],
      [{ ...full, exp: undefined }, badRequest('Missing exp claim')],
      [{ ...full, exp: 0 }, unauthorized('exp not in future')],
    ];
    for (const [payload, expected] of cases) {
      // a garbage signature: the claims are looked at first
      await rejectsWith(handler.authenticate(bearer(handToken(header, payload, 'bad'))), ...expected);
    }
    assert.equal((await handler.authenticate(bearer(await sign(header, full, HMAC_SECRET))))?.userCtx.name, 'alice');
  });

  test('an expired token with a bad signature answers 401 exp not in future (claims first)', async () => {
    const { handler } = await setup(HS_INI);
    const expired = await sign({ alg: 'HS256' }, { ...VALID, exp: NOW - 1 }, Buffer.from('another secret'));
    await rejectsWith(handler.authenticate(bearer(expired)), ...unauthorized('exp not in future'));
  });

  test('row 11: kid required and absent is 400 Missing kid claim', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = exp, kid\n`);
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, HMAC_SECRET))),
      ...badRequest('Missing kid claim'),
    );
  });

  test('row 11: no configured key, or an unusable one, with CouchDB reasons', async () => {
    const ini = [
      '[jwt_keys]',
      'hmac:bad = not base64!',
      `rsa:ec = ${pemOneLine(ecPair('P-256').publicKey)}`,
      `ec:rsa = ${pemOneLine(rsaPair().publicKey)}`,
      'rsa:empty = -----BEGIN PUBLIC KEY-----\\n-----END PUBLIC KEY-----',
      '',
    ].join('\n');
    const { handler } = await setup(ini);
    const cases: [Record<string, unknown>, string][] = [
      [{ alg: 'HS256' }, 'Unknown kid'],
      [{ alg: 'HS256', kid: 'bad' }, 'Not a valid key'],
      [{ alg: 'RS256', kid: 'ec' }, 'not an RSA public key'],
      [{ alg: 'PS256', kid: 'ec' }, 'not an RSA public key'],
      [{ alg: 'ES256', kid: 'rsa' }, 'not an EC public key'],
      [{ alg: 'RS256', kid: 'empty' }, 'Not a valid key'],
      [{ alg: 'EdDSA', kid: 'ec' }, 'Unknown kid'],
    ];
    for (const [header, reason] of cases) {
      await rejectsWith(handler.authenticate(bearer(handToken(header, VALID))), ...badRequest(reason));
    }
  });

  test('row 12: a signature by another key is Bad HMAC for HS, Bad signature otherwise', async () => {
    const { handler } = await setup(`${HS_INI}rsa:_default = ${pemOneLine(rsaPair('a').publicKey)}\n`);
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, Buffer.from('another secret')))),
      ...badRequest('Bad HMAC'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'RS256' }, VALID, rsaPair('b').privateKey))),
      ...badRequest('Bad signature'),
    );
    await rejectsWith(handler.authenticate(bearer(handToken({ alg: 'RS256' }, VALID, '!!'))), ...badRequest('Bad signature'));
    await rejectsWith(handler.authenticate(bearer(handToken({ alg: 'HS256' }, VALID, ''))), ...badRequest('Bad HMAC'));
  });

  test('row 13: a non-string role is 400 Malformed token; an unresolvable path is 404', async () => {
    const { handler, config } = await setup(HS_INI);
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...VALID, '_couchdb.roles': ['a', 1] }, HMAC_SECRET))),
      ...badRequest('Malformed token'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...VALID, '_couchdb.roles': 7 }, HMAC_SECRET))),
      ...badRequest('Malformed token'),
    );
    await config.set('jwt_auth', 'roles_claim_path', 'a.b');
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, HMAC_SECRET))),
      404,
      'not_found',
      'missing json key: a',
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...VALID, a: 'x' }, HMAC_SECRET))),
      404,
      'not_found',
      'json_mismatch',
    );
  });

  test('row 14: no sub is 401 Token missing sub claim., after the roles', async () => {
    const { handler } = await setup(HS_INI);
    const { sub: _sub, ...withoutSub } = VALID;
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, withoutSub, HMAC_SECRET))),
      ...unauthorized('Token missing sub claim.'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...VALID, sub: '' }, HMAC_SECRET))),
      ...unauthorized('Token missing sub claim.'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...withoutSub, '_couchdb.roles': [1] }, HMAC_SECRET))),
      ...badRequest('Malformed token'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { ...VALID, sub: 42 }, HMAC_SECRET))),
      ...badRequest('Malformed token'),
    );
  });
});

describe('JwtHandler: algorithms', () => {
  const ini = [
    HS_INI.trimEnd(),
    `rsa:_default = ${pemOneLine(rsaPair().publicKey)}`,
    `ec:p256 = ${pemOneLine(ecPair('P-256').publicKey)}`,
    `ec:p384 = ${pemOneLine(ecPair('P-384').publicKey)}`,
    `ec:p521 = ${pemOneLine(ecPair('P-521').publicKey)}`,
    `okp:_default = ${pemOneLine(edPair().publicKey)}`,
    '',
  ].join('\n');
  const cases: [string, string | undefined, () => Parameters<typeof sign>[2]][] = [
    ['HS256', undefined, () => HMAC_SECRET],
    ['HS384', undefined, () => HMAC_SECRET],
    ['HS512', undefined, () => HMAC_SECRET],
    ['RS256', undefined, () => rsaPair().privateKey],
    ['RS384', undefined, () => rsaPair().privateKey],
    ['RS512', undefined, () => rsaPair().privateKey],
    ['PS256', undefined, () => rsaPair().privateKey],
    ['PS384', undefined, () => rsaPair().privateKey],
    ['PS512', undefined, () => rsaPair().privateKey],
    ['ES256', 'p256', () => ecPair('P-256').privateKey],
    ['ES384', 'p384', () => ecPair('P-384').privateKey],
    ['ES512', 'p521', () => ecPair('P-521').privateKey],
    ['EdDSA', undefined, () => edPair().privateKey],
  ];
  for (const [alg, kid, key] of cases) {
    test(`${alg} verifies with its key kind, and a tampered payload does not`, async () => {
      const { handler } = await setup(ini);
      const header = kid === undefined ? { alg } : { alg, kid };
      const token = await sign(header, VALID, key());
      assert.deepEqual(await handler.authenticate(bearer(token)), { userCtx: { name: 'alice', roles: ['r1', 'r2'] } });
      const [h, , s] = token.split('.');
      const tampered = `${h}.${b64url({ ...VALID, sub: 'admin' })}.${s}`;
      await rejectsWith(handler.authenticate(bearer(tampered)), ...badRequest(alg.startsWith('HS') ? 'Bad HMAC' : 'Bad signature'));
    });
  }

  test('an ES algorithm with a key of another curve is Bad signature', async () => {
    const { handler } = await setup(ini);
    const token = await sign({ alg: 'ES384', kid: 'p256' }, VALID, ecPair('P-384').privateKey);
    await rejectsWith(handler.authenticate(bearer(token)), ...badRequest('Bad signature'));
  });

  test('an RSA signature cannot pass as PSS or the other way round', async () => {
    const { handler } = await setup(ini);
    const rs = await sign({ alg: 'RS256' }, VALID, rsaPair().privateKey);
    const [, p, s] = rs.split('.');
    await rejectsWith(handler.authenticate(bearer(`${b64url({ alg: 'PS256' })}.${p}.${s}`)), ...badRequest('Bad signature'));
  });
});

describe('JwtHandler: key selection', () => {
  test('a kid selects <kind>:<kid>; no fallback to _default for an unknown kid', async () => {
    const other = Buffer.from('the secret of the named key');
    const { handler } = await setup(`${HS_INI}hmac:named = ${other.toString('base64')}\n`);
    assert.equal((await handler.authenticate(bearer(await sign({ alg: 'HS256', kid: 'named' }, VALID, other))))?.userCtx.name, 'alice');
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256', kid: 'named' }, VALID, HMAC_SECRET))),
      ...badRequest('Bad HMAC'),
    );
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256', kid: 'unknown' }, VALID, HMAC_SECRET))),
      ...badRequest('Unknown kid'),
    );
    for (const kid of [42, null, ['named']]) {
      await rejectsWith(handler.authenticate(bearer(handToken({ alg: 'HS256', kid }, VALID))), ...badRequest('Unknown kid'));
    }
  });

  test('a token without kid needs a _default key', async () => {
    const other = Buffer.from('the secret of the named key');
    const { handler } = await setup(`[jwt_keys]\nhmac:named = ${other.toString('base64')}\n`);
    await rejectsWith(handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, other))), ...badRequest('Unknown kid'));
  });

  test('a kid ending in "=" is written "hmac:abc= = …" in the ini', async () => {
    const { handler } = await setup(`[jwt_keys]\nhmac:abc= = ${HMAC_SECRET_B64}\n`);
    const token = await sign({ alg: 'HS256', kid: 'abc=' }, VALID, HMAC_SECRET);
    assert.equal((await handler.authenticate(bearer(token)))?.userCtx.name, 'alice');
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256', kid: 'abc' }, VALID, HMAC_SECRET))),
      ...badRequest('Unknown kid'),
    );
  });

  test('key confusion: HS256 "signed" with the RSA public key PEM is refused', async () => {
    const { publicKey } = rsaPair();
    const { handler } = await setup(`[jwt_keys]\nrsa:_default = ${pemOneLine(publicKey)}\n`);
    for (const secret of [pem(publicKey), pemOneLine(publicKey), publicKey.export({ type: 'spki', format: 'der' })]) {
      const forged = await sign({ alg: 'HS256' }, VALID, Buffer.from(secret));
      await rejectsWith(handler.authenticate(bearer(forged)), ...badRequest('Unknown kid'));
    }
    // with an hmac key configured as well, the forgery meets that secret and fails as a MAC
    const both = await setup(`[jwt_keys]\nrsa:_default = ${pemOneLine(publicKey)}\n${HS_INI.split('\n')[1]}\n`);
    const forged = await sign({ alg: 'HS256' }, VALID, Buffer.from(pem(publicKey)));
    await rejectsWith(both.handler.authenticate(bearer(forged)), ...badRequest('Bad HMAC'));
  });

  test('an RS token is never checked against an hmac: secret', async () => {
    const { handler } = await setup(HS_INI);
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'RS256' }, VALID, rsaPair().privateKey))),
      ...badRequest('Unknown kid'),
    );
  });
});

describe('JwtHandler: CouchDB jwt_roles_claim_test.exs vectors (reference §14 items 48–51)', () => {
  const KEYS =
    '[jwt_keys]\n' +
    'hmac:myjwttestkey = NTNv7j0TuYARvmNMmWXo6fKvM4o6nv/aUi9ryX38ZH+L1bkrnD1ObOQ8JAUmHCBq7Iy7otZcyAagBLHVKvvYaIpmMuxmARQ97jUVG16Jkpkp1wXOPsrF9zwew6TpczyHkHgX5EuLg2MeBuiT/qJACs1J0apruOOJCg/gOtkjB4c=\n' +
    'hmac:myjwttestkey2 = VW5kb3VidGVkbHktRW5nYWdpbmctUm9hZHdheS0wMjk=\n';
  const LIST_TOKEN = [
    'eyJ0eXAiOiJKV1QiLCJraWQiOiJteWp3dHRlc3RrZXkiLCJhbGciOiJIUzI1NiJ9.',
    'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRyd',
    'WUsImlhdCI6MTY1NTI5NTgxMCwiZXhwIjoxNzU1Mjk5NDEwLCJteSI6eyJuZXN0ZW',
    'QiOnsiX2NvdWNoZGIucm9sZXMiOlsibXlfbmVzdGVkX2NvdWNoZGIucm9sZXNfMSI',
    'sIm15X25lc3RlZF9jb3VjaGRiLnJvbGVzXzEiXX19LCJfY291Y2hkYi5yb2xlcyI6',
    'WyJfY291Y2hkYi5yb2xlc18xIiwiX2NvdWNoZGIucm9sZXNfMiJdLCJteS5fY291Y',
    '2hkYi5yb2xlcyI6WyJteS5fY291Y2hkYi5yb2xlc18xIiwibXkuX2NvdWNoZGIucm',
    '9sZXNfMiJdLCJmb28iOnsiYmFyLnpvbmsiOnsiYmF6LmJ1dSI6eyJiYWEiOnsiYmF',
    'hLmJlZSI6eyJyb2xlcyI6WyJteV9uZXN0ZWRfcm9sZV8xIiwibXlfbmVzdGVkX3Jv',
    'bGVfMiJdfX19fX19.F6kQK-FK0z1kP01bTyw-moXfy2klWfubgF7x7Xitd-0',
  ].join('');
  const STRING_TOKEN = [
    'eyJ0eXAiOiJKV1QiLCJraWQiOiJteWp3dHRlc3RrZXkyIiwiYWxnIjoiSFMyNTYifQ.',
    'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiYWRtaW4iOnRydWU',
    'sImlhdCI6MTY1NTI5NTgxMCwiZXhwIjoxNzU1Mjk5NDEwLCJteSI6eyJuZXN0ZWQiOn',
    'siX2NvdWNoZGIucm9sZXMiOiJteV9uZXN0ZWRfY291Y2hkYl9zdHJpbmcucm9sZXNfM',
    'SwgbXlfbmVzdGVkX2NvdWNoZGJfc3RyaW5nLnJvbGVzXzEifX0sIl9jb3VjaGRiLnJv',
    'bGVzIjoiX2NvdWNoZGJfc3RyaW5nLnJvbGVzXzEsX2NvdWNoZGJfc3RyaW5nLnJvbGV',
    'zXzIiLCJteS5fY291Y2hkYi5yb2xlcyI6Im15Ll9jb3VjaGRiX3N0cmluZy5yb2xlc1',
    '8xLCBteS5fY291Y2hkYl9zdHJpbmcucm9sZXNfMiIsImZvbyI6eyJiYXIuem9uayI6e',
    'yJiYXouYnV1Ijp7ImJhYSI6eyJiYWEuYmVlIjp7InJvbGVzIjoibXlfbmVzdGVkX3N0',
    'cmluZ19yb2xlXzEsIG15X25lc3RlZF9zdHJpbmdfcm9sZV8yIn19fX19fQ.rzaLmcA2',
    '0R291XuGYNNTM9ypGL3UD_GlVp3DmBtWrZI',
  ].join('');
  const PATH = 'foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles';

  async function rolesOf(extra: string, token: string): Promise<string[] | undefined> {
    const { handler } = await setup(KEYS + extra);
    const outcome = await handler.authenticate(bearer(token));
    assert.equal(outcome?.userCtx.name, '1234567890');
    return outcome?.userCtx.roles;
  }

  test('default roles claim name, as a list and as a comma string', async () => {
    assert.deepEqual(await rolesOf('', LIST_TOKEN), ['_couchdb.roles_1', '_couchdb.roles_2']);
    assert.deepEqual(await rolesOf('', STRING_TOKEN), ['_couchdb_string.roles_1', '_couchdb_string.roles_2']);
  });

  test('roles_claim_name = my._couchdb.roles is one top-level key', async () => {
    const extra = '[jwt_auth]\nroles_claim_name = my._couchdb.roles\n';
    assert.deepEqual(await rolesOf(extra, LIST_TOKEN), ['my._couchdb.roles_1', 'my._couchdb.roles_2']);
    assert.deepEqual(await rolesOf(extra, STRING_TOKEN), ['my._couchdb_string.roles_1', 'my._couchdb_string.roles_2']);
  });

  test('roles_claim_path with escaped dots, alone and overriding roles_claim_name', async () => {
    for (const extra of [
      `[jwt_auth]\nroles_claim_path = ${PATH}\n`,
      `[jwt_auth]\nroles_claim_name = my._couchdb.roles\nroles_claim_path = ${PATH}\n`,
    ]) {
      assert.deepEqual(await rolesOf(extra, LIST_TOKEN), ['my_nested_role_1', 'my_nested_role_2']);
      assert.deepEqual(await rolesOf(extra, STRING_TOKEN), ['my_nested_string_role_1', 'my_nested_string_role_2']);
    }
  });

  test('roles_claim_path with bad input is 404', async () => {
    for (const [path, key] of [
      [`<<${PATH}`, '<<foo'],
      [`${PATH}>>`, 'roles>>'],
      ['123456', '123456'],
    ]) {
      const { handler } = await setup(`${KEYS}[jwt_auth]\nroles_claim_path = ${path}\n`);
      await rejectsWith(handler.authenticate(bearer(LIST_TOKEN)), 404, 'not_found', `missing json key: ${key}`);
    }
  });

  test('the vector is refused once its exp (1755299410) has passed', async () => {
    const { handler, time } = await setup(KEYS);
    time.set(1_755_299_410_000);
    await rejectsWith(handler.authenticate(bearer(LIST_TOKEN)), ...unauthorized('exp not in future'));
  });
});

describe('JwtHandler: required_claims', () => {
  test('{iss, "hello"}: a token with iss hello and no exp passes; iss goodbye is 400', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = {iss, "hello"}\n`);
    const good = await sign({ alg: 'HS256' }, { sub: 'alice', iss: 'hello', '_couchdb.roles': ['testing'] }, HMAC_SECRET);
    assert.deepEqual(await handler.authenticate(bearer(good)), { userCtx: { name: 'alice', roles: ['testing'] } });
    const bad = await sign({ alg: 'HS256' }, { sub: 'alice', iss: 'goodbye' }, HMAC_SECRET);
    await rejectsWith(handler.authenticate(bearer(bad)), ...badRequest('Invalid iss claim'));
  });

  test('default (unset) requires exp', async () => {
    const { handler } = await setup(HS_INI);
    await rejectsWith(
      handler.authenticate(bearer(await sign({ alg: 'HS256' }, { sub: 'alice' }, HMAC_SECRET))),
      ...badRequest('Missing exp claim'),
    );
  });

  test('nothing required (sig only): no exp needed, and an expired exp or future nbf is ignored (spec 5.4.7)', async () => {
    const { handler } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = sig\n`);
    for (const payload of [{ sub: 'alice' }, { sub: 'alice', exp: 0 }, { sub: 'alice', nbf: NOW * 2, exp: 'never' }]) {
      assert.equal((await handler.authenticate(bearer(await sign({ alg: 'HS256' }, payload, HMAC_SECRET))))?.userCtx.name, 'alice');
    }
  });

  test('clock edges: exp == now refused, exp == now + 1 accepted; nbf == now refused, now - 1 accepted', async () => {
    const { handler, time } = await setup(`${HS_INI}[jwt_auth]\nrequired_claims = exp, nbf\n`);
    const at = (exp: number, nbf: number) => sign({ alg: 'HS256' }, { sub: 'alice', exp, nbf }, HMAC_SECRET);
    await rejectsWith(handler.authenticate(bearer(await at(NOW, NOW - 1))), ...unauthorized('exp not in future'));
    assert.ok(await handler.authenticate(bearer(await at(NOW + 1, NOW - 1))));
    await rejectsWith(handler.authenticate(bearer(await at(NOW + 1, NOW))), ...unauthorized('nbf not in past'));
    // whole seconds: 999 ms into the second is still NOW
    time.set(NOW_MS + 999);
    assert.ok(await handler.authenticate(bearer(await at(NOW + 1, NOW - 1))));
    time.set(NOW_MS + 1000);
    await rejectsWith(handler.authenticate(bearer(await at(NOW + 1, NOW - 1))), ...unauthorized('exp not in future'));
  });

  test('a required_claims change takes effect without a restart', async () => {
    const { handler, config } = await setup(HS_INI);
    const noExp = await sign({ alg: 'HS256' }, { sub: 'alice', iss: 'hello' }, HMAC_SECRET);
    await rejectsWith(handler.authenticate(bearer(noExp)), ...badRequest('Missing exp claim'));
    await config.set('jwt_auth', 'required_claims', '{iss, "hello"}');
    assert.ok(await handler.authenticate(bearer(noExp)));
    await config.set('jwt_auth', 'required_claims', 'bogus');
    await rejectsWith(handler.authenticate(bearer(noExp)), 500, 'misconfigured_server', 'JWT is not configured correctly');
  });
});

describe('JwtHandler: keys change without a restart', () => {
  test('a new hmac:_default replaces the old one at once, even for a cached token', async () => {
    const { handler, config } = await setup(HS_INI);
    const oldToken = await sign({ alg: 'HS256' }, VALID, HMAC_SECRET);
    assert.ok(await handler.authenticate(bearer(oldToken)));
    const next = Buffer.from('the next secret, rotated in');
    await config.set('jwt_keys', 'hmac:_default', next.toString('base64'));
    await rejectsWith(handler.authenticate(bearer(oldToken)), ...badRequest('Bad HMAC'));
    assert.ok(await handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, next))));
    // deleting the override uncovers the defaults layer's key again
    await config.delete('jwt_keys', 'hmac:_default');
    await rejectsWith(handler.authenticate(bearer(await sign({ alg: 'HS256' }, VALID, next))), ...badRequest('Bad HMAC'));
    assert.ok(await handler.authenticate(bearer(oldToken)));
  });

  test('a PEM key set through the config with \\n escapes works at once', async () => {
    const { handler, config } = await setup('');
    const token = await sign({ alg: 'RS256', kid: 'idp' }, VALID, rsaPair().privateKey);
    await rejectsWith(handler.authenticate(bearer(token)), ...badRequest('Unknown kid'));
    await config.set('jwt_keys', 'rsa:idp', pemOneLine(rsaPair().publicKey));
    assert.equal((await handler.authenticate(bearer(token)))?.userCtx.name, 'alice');
    await config.delete('jwt_keys', 'rsa:idp');
    await rejectsWith(handler.authenticate(bearer(token)), ...badRequest('Unknown kid'));
  });
});

describe('JwtHandler: verified-token cache', () => {
  for (const [alg, key] of [
    ['RS256', () => rsaPair().privateKey],
    ['ES256', () => ecPair('P-256').privateKey],
  ] as const) {
    test(`a repeated ${alg} token is verified once; another token is verified again`, async () => {
      const spy = counting();
      const { handler } = await setup(
        `[jwt_keys]\nrsa:_default = ${pemOneLine(rsaPair().publicKey)}\nec:_default = ${pemOneLine(ecPair('P-256').publicKey)}\n`,
        { verifySignature: spy.verifier },
      );
      const token = await sign({ alg }, VALID, key());
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(await handler.authenticate(bearer(token)), { userCtx: { name: 'alice', roles: ['r1', 'r2'] } });
      }
      assert.equal(spy.calls(), 1);
      await handler.authenticate(bearer(await sign({ alg }, { ...VALID, sub: 'bob' }, key())));
      assert.equal(spy.calls(), 2);
    });
  }

  test('a cached token is refused once its exp has passed', async () => {
    const spy = counting();
    const { handler, time } = await setup(HS_INI, { verifySignature: spy.verifier });
    const token = await sign({ alg: 'HS256' }, { ...VALID, exp: NOW + 2 }, HMAC_SECRET);
    assert.ok(await handler.authenticate(bearer(token)));
    time.set((NOW + 1) * 1000 + 999);
    assert.ok(await handler.authenticate(bearer(token)));
    assert.equal(spy.calls(), 1);
    time.set((NOW + 2) * 1000);
    await rejectsWith(handler.authenticate(bearer(token)), ...unauthorized('exp not in future'));
  });

  test('entries end after token_cache_max_age; token_cache_size = 0 disables the cache', async () => {
    const spy = counting();
    const { handler, time, config } = await setup(`${HS_INI}[jwt_auth]\ntoken_cache_max_age = 10\n`, {
      verifySignature: spy.verifier,
    });
    const token = await sign({ alg: 'HS256' }, { ...VALID, exp: NOW + 3600 }, HMAC_SECRET);
    await handler.authenticate(bearer(token));
    time.advance(9_999);
    await handler.authenticate(bearer(token));
    assert.equal(spy.calls(), 1);
    time.advance(1);
    await handler.authenticate(bearer(token));
    assert.equal(spy.calls(), 2);
    await config.set('jwt_auth', 'token_cache_size', '0');
    await handler.authenticate(bearer(token));
    await handler.authenticate(bearer(token));
    assert.equal(spy.calls(), 4);
  });

  test('a [jwt_auth] change drops the cache: new roles settings apply to a known token', async () => {
    const spy = counting();
    const { handler, config } = await setup(HS_INI, { verifySignature: spy.verifier });
    const token = await sign({ alg: 'HS256' }, { ...VALID, groups: 'g1, g2' }, HMAC_SECRET);
    assert.deepEqual((await handler.authenticate(bearer(token)))?.userCtx.roles, ['r1', 'r2']);
    await config.set('jwt_auth', 'roles_claim_name', 'groups');
    assert.deepEqual((await handler.authenticate(bearer(token)))?.userCtx.roles, ['g1', 'g2']);
    assert.equal(spy.calls(), 2);
  });

  test('a failed token is never cached', async () => {
    const spy = counting();
    const { handler } = await setup(HS_INI, { verifySignature: spy.verifier });
    const bad = await sign({ alg: 'HS256' }, VALID, Buffer.from('another secret'));
    await rejectsWith(handler.authenticate(bearer(bad)), ...badRequest('Bad HMAC'));
    await rejectsWith(handler.authenticate(bearer(bad)), ...badRequest('Bad HMAC'));
    assert.equal(spy.calls(), 2);
  });

  test('a caller mutating the returned roles does not change the next answer', async () => {
    const { handler } = await setup(HS_INI);
    const token = await sign({ alg: 'HS256' }, VALID, HMAC_SECRET);
    (await handler.authenticate(bearer(token)))?.userCtx.roles.push('_admin');
    assert.deepEqual((await handler.authenticate(bearer(token)))?.userCtx.roles, ['r1', 'r2']);
  });
});
