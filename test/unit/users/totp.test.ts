import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { JsonObject } from '../../../src/storage/storage.js';
import {
  base32Decode,
  base32Encode,
  totpCode,
  totpCounter,
  totpProblem,
  totpSettings,
  verifyTotp,
  type TotpAlgorithm,
  type TotpSettings,
} from '../../../src/users/totp.js';

// RFC 6238 appendix A: the seeds are ASCII digits, 20, 32 and 64 bytes long.
const SEEDS: Record<TotpAlgorithm, Buffer> = {
  sha: Buffer.from('12345678901234567890', 'ascii'),
  sha256: Buffer.from('12345678901234567890123456789012', 'ascii'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234', 'ascii'),
};

// RFC 6238 appendix B: time (s) → 8-digit TOTP for SHA-1, SHA-256, SHA-512.
const RFC6238: ReadonlyArray<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

// RFC 4226 appendix D: 6-digit HOTP of the SHA-1 seed for counters 0..9.
const RFC4226 = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];

const settings = (algorithm: TotpAlgorithm, length: 6 | 7 | 8 = 8): TotpSettings => ({ key: SEEDS[algorithm], algorithm, length });

describe('RFC 6238 test vectors', () => {
  for (const [time, sha1, sha256, sha512] of RFC6238) {
    for (const [algorithm, expected] of [['sha', sha1], ['sha256', sha256], ['sha512', sha512]] as const) {
      test(`${algorithm} at T = ${time} → ${expected}`, () => {
        assert.equal(totpCode(SEEDS[algorithm], totpCounter(time), algorithm, 8), expected);
        assert.deepEqual(verifyTotp(expected, settings(algorithm), time), { ok: true, counter: Math.floor(time / 30) });
      });
    }
  }

  test('RFC 4226 HOTP values (6 digits, zero padding kept in 7 and 8 digit forms)', () => {
    RFC4226.forEach((expected, counter) => assert.equal(totpCode(SEEDS.sha, counter, 'sha', 6), expected, `counter ${counter}`));
    // 1111111109 gives 07081804: the leading zero must survive.
    assert.equal(totpCode(SEEDS.sha, totpCounter(1111111109), 'sha', 8), '07081804');
    assert.equal(totpCode(SEEDS.sha, totpCounter(1111111109), 'sha', 7), '7081804');
    assert.equal(totpCode(SEEDS.sha, totpCounter(1111111109), 'sha', 6), '081804');
  });

  test('a code of one algorithm is not accepted for another', () => {
    assert.deepEqual(verifyTotp('94287082', settings('sha256'), 59), { ok: false });
    assert.deepEqual(verifyTotp('46119246', settings('sha'), 59), { ok: false });
  });
});

describe('windows (injected clock)', () => {
  // Step 1234567890 / 30 = 41152263; its code is accepted from one step before to one step after.
  const step = 41152263;
  const code = totpCode(SEEDS.sha, step, 'sha', 6);
  const six = settings('sha', 6);

  test('t−30 s, t and t+30 s are accepted; the second before and the second after are not', () => {
    const start = step * 30;
    assert.deepEqual(verifyTotp(code, six, start - 31), { ok: false }, 'two steps early');
    assert.deepEqual(verifyTotp(code, six, start - 30), { ok: true, counter: step }, 'first second of the step before');
    assert.deepEqual(verifyTotp(code, six, start), { ok: true, counter: step });
    assert.deepEqual(verifyTotp(code, six, start + 29.999), { ok: true, counter: step });
    assert.deepEqual(verifyTotp(code, six, start + 59.999), { ok: true, counter: step }, 'last instant of the step after');
    assert.deepEqual(verifyTotp(code, six, start + 60), { ok: false }, 'two steps late');
  });

  test('the matched counter is the step of the code, not the current one', () => {
    assert.deepEqual(verifyTotp(totpCode(SEEDS.sha, step + 1, 'sha', 6), six, step * 30 + 1), { ok: true, counter: step + 1 });
    assert.deepEqual(verifyTotp(totpCode(SEEDS.sha, step - 1, 'sha', 6), six, step * 30 + 1), { ok: true, counter: step - 1 });
    assert.deepEqual(verifyTotp(totpCode(SEEDS.sha, step + 2, 'sha', 6), six, step * 30 + 1), { ok: false });
  });

  test('a token matching two steps (a coincidence) counts as the later one', () => {
    // Found by search: this key gives 361628 for both step 0 and step 2.
    const key = Buffer.from('646976616e2d746f747000113976', 'hex');
    assert.equal(totpCode(key, 0, 'sha', 6), '361628');
    assert.equal(totpCode(key, 2, 'sha', 6), '361628');
    assert.deepEqual(verifyTotp('361628', { key, algorithm: 'sha', length: 6 }, 45), { ok: true, counter: 2 });
  });

  test('at the epoch there is no step before (no negative counter)', () => {
    assert.deepEqual(verifyTotp(RFC4226[0], six, 0), { ok: true, counter: 0 });
    assert.deepEqual(verifyTotp(RFC4226[1], six, 0), { ok: true, counter: 1 });
    assert.deepEqual(verifyTotp(RFC4226[2], six, 0), { ok: false });
  });
});

describe('token shape', () => {
  const six = settings('sha', 6);
  const now = 45; // step 1: RFC4226[0..2] are in the window

  test('only exactly `length` ASCII digits can match', () => {
    assert.equal(verifyTotp('287082', six, now).ok, true);
    for (const token of [undefined, '', '28708', '2870820', ' 287082', '287082 ', '+287082', '287 082', '２８７０８２', '28708a', '0x1234']) {
      assert.deepEqual(verifyTotp(token, six, now), { ok: false }, JSON.stringify(token));
    }
  });

  test('a 6-digit code is not accepted by a length-8 setting, nor the reverse', () => {
    const eight = settings('sha', 8);
    const code8 = totpCode(SEEDS.sha, 1, 'sha', 8);
    assert.equal(verifyTotp(code8, eight, now).ok, true);
    assert.equal(verifyTotp(code8.slice(2), eight, now).ok, false);
    assert.equal(verifyTotp(code8, six, now).ok, false);
  });
});

describe('base32 (RFC 4648)', () => {
  const vectors: Array<[string, string]> = [
    ['', ''],
    ['f', 'MY======'],
    ['fo', 'MZXQ===='],
    ['foo', 'MZXW6==='],
    ['foob', 'MZXW6YQ='],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI======'],
  ];

  test('RFC 4648 vectors, with and without padding, in any case', () => {
    for (const [plain, encoded] of vectors) {
      assert.equal(base32Decode(encoded)?.toString('ascii'), plain, encoded);
      assert.equal(base32Decode(encoded.replace(/=+$/, ''))?.toString('ascii'), plain, `${encoded} unpadded`);
      assert.equal(base32Decode(encoded.toLowerCase())?.toString('ascii'), plain, `${encoded} lower case`);
      assert.equal(base32Encode(Buffer.from(plain, 'ascii')), encoded.replace(/=+$/, ''));
    }
    assert.equal(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ')?.toString('ascii'), '12345678901234567890');
  });

  test('invalid input → undefined', () => {
    for (const text of ['M', 'MZX', 'MZXW6Y', 'MY=====', 'MY=======', 'MZXW6YTB========', 'M=Y=====', 'MY1=====', 'MZ0W', 'MZ8W', 'MZXW 6YTB', 'MZXW-6YTB', '=', '========']) {
      assert.equal(base32Decode(text), undefined, text);
    }
  });

  test('property: decode(encode(bytes)) = bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
        assert.deepEqual(base32Decode(base32Encode(bytes)), Buffer.from(bytes));
      }),
    );
  });
});

describe('the totp member of a user document', () => {
  const KEY = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

  test('acceptable values', () => {
    const values: Array<JsonObject | null | undefined> = [undefined, null, { key: KEY }, { key: KEY.toLowerCase(), algorithm: 'sha512', length: 8 }, { key: 'GEZDGNBVGY3TQOJQ' }];
    for (const value of values) {
      assert.equal(totpProblem(value), undefined, JSON.stringify(value));
    }
  });

  test('each malformed member gets its reason', () => {
    const cases: Array<[unknown, string]> = [
      ['GEZDGNBV', 'totp must be an object.'],
      [[KEY], 'totp must be an object.'],
      [true, 'totp must be an object.'],
      [{}, 'totp.key must be a base32 string.'],
      [{ key: 42 }, 'totp.key must be a base32 string.'],
      [{ key: '' }, 'totp.key must be a base32 string.'],
      [{ key: 'not base32!' }, 'totp.key must be a base32 string.'],
      [{ key: 'GEZDGNBVGY3TQOJQG' }, 'totp.key must be a base32 string.'],
      [{ key: 'MZXW6YTBOI======MZXW6YTB' }, 'totp.key must be a base32 string.'],
      [{ key: 'GEZDGNBVGY3TQ' }, 'totp.key is too short: use at least 10 random bytes (16 base32 characters).'],
      [{ key: KEY, algorithm: 'sha1' }, 'totp.algorithm must be sha, sha256 or sha512.'],
      [{ key: KEY, algorithm: 'SHA256' }, 'totp.algorithm must be sha, sha256 or sha512.'],
      [{ key: KEY, algorithm: null }, 'totp.algorithm must be sha, sha256 or sha512.'],
      [{ key: KEY, algorithm: 'toString' }, 'totp.algorithm must be sha, sha256 or sha512.'],
      [{ key: KEY, length: 9 }, 'totp.length must be 6, 7 or 8.'],
      [{ key: KEY, length: '6' }, 'totp.length must be 6, 7 or 8.'],
      [{ key: KEY, length: 6.5 }, 'totp.length must be 6, 7 or 8.'],
    ];
    for (const [value, reason] of cases) assert.equal(totpProblem(value as never), reason, JSON.stringify(value));
  });

  test('settings: defaults sha and 6 digits; undefined for absent or malformed members', () => {
    assert.deepEqual(totpSettings({ key: KEY }), { key: SEEDS.sha, algorithm: 'sha', length: 6 });
    assert.deepEqual(totpSettings({ key: KEY.toLowerCase(), algorithm: 'sha256', length: 7 }), { key: SEEDS.sha, algorithm: 'sha256', length: 7 });
    assert.equal(totpSettings(undefined), undefined);
    assert.equal(totpSettings(null), undefined);
    assert.equal(totpSettings({ key: 'x' }), undefined);
    assert.equal(totpSettings({ key: KEY, length: 9 }), undefined);
  });
});
