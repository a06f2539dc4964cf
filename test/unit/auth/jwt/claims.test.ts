import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  checkPayloadClaims,
  checkTyp,
  parseRequiredClaims,
  type RequiredClaims,
} from '../../../../src/auth/jwt/claims.js';
import { badRequest, NOW, rejectsWith, unauthorized } from './fixtures.js';

const NONE: RequiredClaims = { typ: false, iss: undefined, iat: false, nbf: false, exp: false, kid: false };

function parsed(value: string): RequiredClaims {
  const result = parseRequiredClaims(value);
  assert.ok(result.ok, `expected ${JSON.stringify(value)} to parse`);
  return result.claims;
}

describe('parseRequiredClaims', () => {
  const accepted: [string, Partial<RequiredClaims>][] = [
    ['', {}],
    ['   ', {}],
    ['exp', { exp: true }],
    ['exp, nbf', { exp: true, nbf: true }],
    ['exp,nbf,iat,typ,kid', { exp: true, nbf: true, iat: true, typ: true, kid: true }],
    ['{iss, "hello"}', { iss: 'hello' }],
    ['exp, nbf, {iss, "MyCompany"}', { exp: true, nbf: true, iss: 'MyCompany' }],
    ['{iss,"a b, c"}', { iss: 'a b, c' }],
    // a bare iss is CouchDB's "present and never equal"
    ['iss', { iss: true }],
    // sig is accepted and changes nothing: signatures are always verified
    ['sig', {}],
    // anything between matches is ignored, as CouchDB's global regex does
    ['exp; nbf', { exp: true, nbf: true }],
  ];
  for (const [value, expected] of accepted) {
    test(`${JSON.stringify(value)} parses`, () => {
      assert.deepEqual(parsed(value), { ...NONE, ...expected });
    });
  }

  const refused: [string, RegExp][] = [
    ['sub', /unknown check "sub"/],
    ['alg', /"alg" listed twice/],
    ['exp, exp', /"exp" listed twice/],
    ['iss, {iss, "x"}', /"iss" listed twice/],
    ['{exp, "x"}', /"exp" takes no value/],
    ['EXP', /no claim names found/],
    [',', /no claim names found/],
    ['Exp', /unknown check "xp"/],
    ['{iss, hello}', /unknown check "hello"/],
  ];
  for (const [value, problem] of refused) {
    test(`${JSON.stringify(value)} is a configuration error`, () => {
      const result = parseRequiredClaims(value);
      assert.equal(result.ok, false);
      assert.match((result as { problem: string }).problem, problem);
    });
  }
});

describe('checkTyp', () => {
  test('not required: absent or any value passes', () => {
    checkTyp({}, NONE);
    checkTyp({ typ: 'NOPE' }, NONE);
  });
  test('required: missing, wrong case and wrong value are refused; JWT passes', async () => {
    const claims = { ...NONE, typ: true };
    await rejectsWith(() => checkTyp({}, claims), ...badRequest('Missing typ header parameter'));
    await rejectsWith(() => checkTyp({ typ: 'NOPE' }, claims), ...badRequest('Invalid typ header parameter'));
    await rejectsWith(() => checkTyp({ typ: 'jwt' }, claims), ...badRequest('Invalid typ header parameter'));
    checkTyp({ typ: 'JWT' }, claims);
  });
});

describe('checkPayloadClaims', () => {
  test('nothing required: nothing is validated, expired or not', () => {
    checkPayloadClaims({ exp: 0, nbf: NOW * 2, iat: 'hello', iss: 'anyone' }, NONE, NOW);
  });

  test('iss with a value: missing, different, non-string are refused', async () => {
    const claims = { ...NONE, iss: 'hello' };
    await rejectsWith(() => checkPayloadClaims({}, claims, NOW), ...badRequest('Missing iss claim'));
    await rejectsWith(() => checkPayloadClaims({ iss: 'goodbye' }, claims, NOW), ...badRequest('Invalid iss claim'));
    await rejectsWith(() => checkPayloadClaims({ iss: ['hello'] }, claims, NOW), ...badRequest('Invalid iss claim'));
    checkPayloadClaims({ iss: 'hello' }, claims, NOW);
  });

  test('a bare iss: missing is "Missing", any value is "Invalid" (CouchDB)', async () => {
    const claims = { ...NONE, iss: true as const };
    await rejectsWith(() => checkPayloadClaims({}, claims, NOW), ...badRequest('Missing iss claim'));
    await rejectsWith(() => checkPayloadClaims({ iss: 'x' }, claims, NOW), ...badRequest('Invalid iss claim'));
  });

  test('iat: missing and non-integers are refused, no time comparison', async () => {
    const claims = { ...NONE, iat: true };
    await rejectsWith(() => checkPayloadClaims({}, claims, NOW), ...badRequest('Missing iat claim'));
    for (const iat of ['hello', 1.5, null, true, '1700000000']) {
      await rejectsWith(() => checkPayloadClaims({ iat }, claims, NOW), ...badRequest('Invalid iat claim'));
    }
    checkPayloadClaims({ iat: NOW * 10 }, claims, NOW);
    checkPayloadClaims({ iat: 0 }, claims, NOW);
  });

  test('nbf: strictly in the past; equal to now is refused', async () => {
    const claims = { ...NONE, nbf: true };
    await rejectsWith(() => checkPayloadClaims({}, claims, NOW), ...badRequest('Missing nbf claim'));
    await rejectsWith(() => checkPayloadClaims({ nbf: NOW * 2 }, claims, NOW), ...unauthorized('nbf not in past'));
    await rejectsWith(() => checkPayloadClaims({ nbf: NOW }, claims, NOW), ...unauthorized('nbf not in past'));
    checkPayloadClaims({ nbf: NOW - 1 }, claims, NOW);
  });

  test('exp: strictly in the future; equal to now is refused, now + 1 accepted', async () => {
    const claims = { ...NONE, exp: true };
    await rejectsWith(() => checkPayloadClaims({}, claims, NOW), ...badRequest('Missing exp claim'));
    await rejectsWith(() => checkPayloadClaims({ exp: 0 }, claims, NOW), ...unauthorized('exp not in future'));
    await rejectsWith(() => checkPayloadClaims({ exp: NOW }, claims, NOW), ...unauthorized('exp not in future'));
    checkPayloadClaims({ exp: NOW + 1 }, claims, NOW);
  });

  test('a required exp or nbf that is not a number is refused (CouchDB would accept such an exp)', async () => {
    for (const value of ['9999999999', true, null, {}, [NOW + 100]]) {
      await rejectsWith(
        () => checkPayloadClaims({ exp: value }, { ...NONE, exp: true }, NOW),
        ...unauthorized('exp not in future'),
      );
      await rejectsWith(
        () => checkPayloadClaims({ nbf: value }, { ...NONE, nbf: true }, NOW),
        ...unauthorized('nbf not in past'),
      );
    }
  });

  test('order: iss, then iat, then nbf, then exp', async () => {
    const all = { ...NONE, iss: 'hello', iat: true, nbf: true, exp: true };
    const bad = { iss: 'x', iat: 'x', nbf: NOW * 2, exp: 0 };
    await rejectsWith(() => checkPayloadClaims(bad, all, NOW), ...badRequest('Invalid iss claim'));
    await rejectsWith(() => checkPayloadClaims({ ...bad, iss: 'hello' }, all, NOW), ...badRequest('Invalid iat claim'));
    await rejectsWith(
      () => checkPayloadClaims({ ...bad, iss: 'hello', iat: 1 }, all, NOW),
      ...unauthorized('nbf not in past'),
    );
    await rejectsWith(
      () => checkPayloadClaims({ ...bad, iss: 'hello', iat: 1, nbf: 1 }, all, NOW),
      ...unauthorized('exp not in future'),
    );
  });

  test('claims inherited from Object.prototype do not count as present', async () => {
    await rejectsWith(
      () => checkPayloadClaims(Object.create({ exp: NOW + 100 }) as Record<string, unknown>, { ...NONE, exp: true }, NOW),
      ...badRequest('Missing exp claim'),
    );
  });
});
