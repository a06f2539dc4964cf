import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { COUCH_HASH_ALGORITHMS } from '../../../../src/crypto/hash-algorithms.js';
import {
  decodeCookieValue,
  firstAuthSessionCookie,
  isExpired,
  isSupportedHashAlgorithm,
  mintCookieValue,
  needsRefresh,
  parseHashAlgorithms,
  parseTimeHex,
  verifyCookieMac,
  type DecodedCookie,
} from '../../../../src/auth/cookie/codec.js';

// Reference §3.1 worked vector.
const SECRET = '92de07df7e7a3fe14808cef90a7cc0d9';
const SALT = '1112283cf988a34f124200a050d308a1';
const VECTOR_HMAC = '152a88359c2116a0264451a20b171e330410a55c69c490810de1a29adaaaecfa';
const VECTOR_COOKIE = 'amFuOjY1NTNGMTAwOhUqiDWcIRagJkRRogsXHjMEEKVcacSQgQ3hopraquz6';
const DEFAULT_ALGORITHMS = parseHashAlgorithms('sha256, sha');

const b64url = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64url');

/** A cookie built without the codec, so the codec is checked against an independent encoder. */
function handMadeCookie(name: string, time: number, secret: string, salt: string, nodeDigest: string): string {
  const message = `${name}:${time.toString(16).toUpperCase()}`;
  const mac = createHmac(nodeDigest, secret + salt).update(message).digest();
  return b64url(Buffer.from([...Buffer.from(`${message}:`), ...mac]));
}

function token(decoded: DecodedCookie) {
  assert.equal(decoded.kind, 'token');
  return decoded as Extract<DecodedCookie, { kind: 'token' }>;
}

describe('AuthSession codec: the worked vector (reference §3.1)', () => {
  test('the vector HMAC is HMAC-SHA256(secret ‖ salt, "jan:6553F100")', () => {
    assert.equal(createHmac('sha256', SECRET + SALT).update('jan:6553F100').digest('hex'), VECTOR_HMAC);
  });

  test('R-COOKIE-1: minting jan at 1700000000 gives the vector cookie', () => {
    assert.equal(mintCookieValue('jan', 1700000000, SECRET, SALT, 'sha256'), VECTOR_COOKIE);
  });

  test('R-CK-2: the vector cookie decodes to jan, 6553F100 and the vector HMAC, and verifies', () => {
    const decoded = token(decodeCookieValue(VECTOR_COOKIE));
    assert.equal(decoded.name, 'jan');
    assert.equal(decoded.timeHex, '6553F100');
    assert.equal(parseTimeHex(decoded.timeHex), 1700000000);
    assert.equal(decoded.mac.toString('hex'), VECTOR_HMAC);
    assert.equal(decoded.signed.toString('utf8'), 'jan:6553F100');
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, DEFAULT_ALGORITHMS), true);
  });

  test('the vector cookie does not verify with another secret, salt or only SHA-1', () => {
    const decoded = decodeCookieValue(VECTOR_COOKIE);
    assert.equal(verifyCookieMac(decoded, ['another secret'], SALT, DEFAULT_ALGORITHMS), false);
    assert.equal(verifyCookieMac(decoded, [SECRET], 'another salt', DEFAULT_ALGORITHMS), false);
    assert.equal(verifyCookieMac(decoded, [SECRET], '', DEFAULT_ALGORITHMS), false);
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, ['sha']), false);
    assert.equal(verifyCookieMac(decoded, [], SALT, DEFAULT_ALGORITHMS), false);
  });

  test('any listed secret may have signed it (rotation), in any position', () => {
    const decoded = decodeCookieValue(VECTOR_COOKIE);
    assert.equal(verifyCookieMac(decoded, ['new secret', SECRET], SALT, DEFAULT_ALGORITHMS), true);
    assert.equal(verifyCookieMac(decoded, [SECRET, 'other'], SALT, DEFAULT_ALGORITHMS), true);
  });

  test('an empty secret never verifies, even for a cookie signed with it', () => {
    const value = handMadeCookie('jan', 1700000000, '', SALT, 'sha256');
    assert.equal(verifyCookieMac(decodeCookieValue(value), [''], SALT, DEFAULT_ALGORITHMS), false);
  });

  test('unknown or unsupported names in the algorithm list are skipped, not fatal', () => {
    const decoded = decodeCookieValue(VECTOR_COOKIE);
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, ['bogus', 'md4', '__proto__', 'sha256']), true);
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, ['bogus', 'md4']), false);
  });

  test('non-token decodings never verify', () => {
    assert.equal(verifyCookieMac({ kind: 'empty' }, [SECRET], SALT, DEFAULT_ALGORITHMS), false);
    assert.equal(verifyCookieMac({ kind: 'malformed' }, [SECRET], SALT, DEFAULT_ALGORITHMS), false);
  });
});

describe('AuthSession codec: hash algorithms', () => {
  const listed = parseHashAlgorithms('sha256, sha512, sha, blake2s');

  for (const [algorithm, nodeDigest, length] of [
    ['sha256', 'sha256', 32],
    ['sha512', 'sha512', 64],
    ['sha', 'sha1', 20],
    ['blake2s', 'blake2s256', 32],
  ] as const) {
    test(`a ${algorithm} cookie verifies when ${algorithm} is listed`, () => {
      const value = mintCookieValue('jan', 1700000000, SECRET, SALT, algorithm);
      assert.equal(value, handMadeCookie('jan', 1700000000, SECRET, SALT, nodeDigest));
      const decoded = token(decodeCookieValue(value));
      assert.equal(decoded.mac.length, length);
      assert.equal(verifyCookieMac(decoded, [SECRET], SALT, listed), true);
      assert.equal(verifyCookieMac(decoded, [SECRET], SALT, [algorithm]), true);
      const others = listed.filter((name) => name !== algorithm);
      assert.equal(verifyCookieMac(decoded, [SECRET], SALT, others), false);
    });
  }

  for (const [algorithm, nodeDigest] of [
    ['md5', 'md5'],
    ['ripemd160', 'ripemd160'],
  ] as const) {
    test(`a ${algorithm} cookie is refused when ${algorithm} is not listed`, () => {
      const value = handMadeCookie('jan', 1700000000, SECRET, SALT, nodeDigest);
      assert.equal(verifyCookieMac(decodeCookieValue(value), [SECRET], SALT, listed), false);
      // The control: the same cookie is fine once the algorithm is listed.
      assert.equal(verifyCookieMac(decodeCookieValue(value), [SECRET], SALT, parseHashAlgorithms(algorithm)), true);
    });
  }

  test('a SHA-1 cookie minted by CouchDB 3.3 verifies with the default "sha256, sha"', () => {
    const value = handMadeCookie('jan', 1700000000, SECRET, SALT, 'sha1');
    assert.deepEqual(DEFAULT_ALGORITHMS, ['sha256', 'sha']);
    assert.equal(verifyCookieMac(decodeCookieValue(value), [SECRET], SALT, DEFAULT_ALGORITHMS), true);
    assert.equal(verifyCookieMac(decodeCookieValue(value), [SECRET], SALT, ['sha256']), false);
  });

  test('a RIPEMD-160 MAC has SHA-1 length but still does not pass as SHA-1', () => {
    const value = handMadeCookie('jan', 1700000000, SECRET, SALT, 'ripemd160');
    assert.equal(token(decodeCookieValue(value)).mac.length, 20);
    assert.equal(verifyCookieMac(decodeCookieValue(value), [SECRET], SALT, ['sha']), false);
  });

  const table: [string, string[]][] = [
    ['sha256, sha', ['sha256', 'sha']],
    ['sha512,sha256', ['sha512', 'sha256']],
    ['  sha512 ,  sha  ', ['sha512', 'sha']],
    ['', ['sha256']],
    [' , ,', ['sha256']],
    ['bogus, sha512', ['sha512']],
    ['SHA256', ['sha256']],
    ['sha1', ['sha256']],
    ['sha, sha, sha256', ['sha', 'sha256']],
    ['blake2b, md5', ['blake2b', 'md5']],
    ['__proto__, constructor', ['sha256']],
  ];
  for (const [setting, expected] of table) {
    test(`hash_algorithms ${JSON.stringify(setting)} → ${expected.join(', ')}`, () => {
      assert.deepEqual(parseHashAlgorithms(setting), expected);
    });
  }

  test('an algorithm this runtime cannot HMAC with is dropped, not fatal', () => {
    let md4: boolean;
    try {
      createHmac('md4', 'k');
      md4 = true;
    } catch {
      md4 = false;
    }
    assert.equal(isSupportedHashAlgorithm('md4'), md4);
    assert.deepEqual(parseHashAlgorithms('md4, sha'), md4 ? ['md4', 'sha'] : ['sha']);
  });

  test('CouchDB names map to Node digests; Node names are not CouchDB names', () => {
    assert.equal(COUCH_HASH_ALGORITHMS.get('sha'), 'sha1');
    assert.equal(COUCH_HASH_ALGORITHMS.get('blake2s'), 'blake2s256');
    assert.equal(COUCH_HASH_ALGORITHMS.get('blake2b'), 'blake2b512');
    for (const name of ['sha', 'sha224', 'sha256', 'sha384', 'sha512', 'blake2s', 'blake2b', 'md5', 'ripemd160']) {
      assert.equal(isSupportedHashAlgorithm(name), true, name);
    }
    for (const name of ['sha1', 'blake2s256', 'SHA256', '', 'toString', '__proto__']) {
      assert.equal(isSupportedHashAlgorithm(name), false, name);
    }
  });

  test('minting refuses an unsupported algorithm or a time that is not whole non-negative seconds', () => {
    assert.throws(() => mintCookieValue('jan', 1700000000, SECRET, SALT, 'sha1'), TypeError);
    assert.throws(() => mintCookieValue('jan', 1700000000, SECRET, SALT, 'nope'), TypeError);
    assert.throws(() => mintCookieValue('jan', 1700000000.5, SECRET, SALT, 'sha256'), TypeError);
    assert.throws(() => mintCookieValue('jan', -1, SECRET, SALT, 'sha256'), TypeError);
    assert.throws(() => mintCookieValue('jan', Number.NaN, SECRET, SALT, 'sha256'), TypeError);
  });

  test('TIMEHEX is written in uppercase, as Erlang integer_to_list(T, 16) does', () => {
    const decoded = token(decodeCookieValue(mintCookieValue('jan', 0xabcdef, SECRET, SALT, 'sha256')));
    assert.equal(decoded.timeHex, 'ABCDEF');
    assert.equal(token(decodeCookieValue(mintCookieValue('jan', 0, SECRET, SALT, 'sha256'))).timeHex, '0');
  });
});

describe('AuthSession codec: decoding', () => {
  const table: [string, string, DecodedCookie['kind']][] = [
    ['empty string', '', 'empty'],
    ['not base64 at all', '!!!!', 'malformed'],
    ['no colon ("jan")', b64url('jan'), 'malformed'],
    ['one colon ("jan:6553F100")', b64url('jan:6553F100'), 'malformed'],
    ['two colons, empty MAC', b64url('jan:6553F100:'), 'token'],
    ['only colons', b64url('::'), 'token'],
    ['padding "=" is not base64url', `${b64url('jan:1:x')}==`, 'malformed'],
    ['a single "=" is not base64url', `${b64url('jan:1:xy')}=`, 'malformed'],
    ['standard-alphabet "+" is refused', Buffer.from('jan:1:\xfb\xef', 'latin1').toString('base64'), 'malformed'],
    ['the same bytes in base64url decode', b64url(Buffer.from('jan:1:\xfb\xef', 'latin1')), 'token'],
    ['length 4n+1 is not base64', 'amFuO', 'malformed'],
    ['length 4n+1 even when the rest would decode to a token', `${b64url('jan:1:xyz')}A`, 'malformed'],
    ['leading space', ` ${VECTOR_COOKIE}`, 'malformed'],
    ['trailing newline', `${VECTOR_COOKIE}\n`, 'malformed'],
    ['a dot inside', `${VECTOR_COOKIE.slice(0, 8)}.${VECTOR_COOKIE.slice(9)}`, 'malformed'],
    ['non-ASCII character', `${VECTOR_COOKIE.slice(0, 8)}é${VECTOR_COOKIE.slice(9)}`, 'malformed'],
    ['the vector cookie', VECTOR_COOKIE, 'token'],
  ];
  for (const [title, value, kind] of table) {
    test(`${title} → ${kind}`, () => assert.equal(decodeCookieValue(value).kind, kind));
  }

  test('the check for "+" is not vacuous: that base64 really contains "+" or "/"', () => {
    assert.match(Buffer.from('jan:1:\xfb\xef', 'latin1').toString('base64'), /[+/]/);
  });

  test('two colons and an empty MAC split as "", "", ""', () => {
    const decoded = token(decodeCookieValue(b64url('::')));
    assert.equal(decoded.name, '');
    assert.equal(decoded.timeHex, '');
    assert.equal(decoded.mac.length, 0);
  });

  test('a MAC with ":" bytes, built directly, stays whole', () => {
    const mac = Buffer.from([0x3a, 0x01, 0x3a, 0x3a, 0xff]);
    const decoded = token(decodeCookieValue(b64url(Buffer.from([...Buffer.from('jan:6553F100:'), ...mac]))));
    assert.equal(decoded.name, 'jan');
    assert.equal(decoded.timeHex, '6553F100');
    assert.deepEqual([...decoded.mac], [...mac]);
    assert.equal(decoded.signed.toString('utf8'), 'jan:6553F100');
  });

  test('a real SHA-256 MAC containing ":" bytes (found by search) decodes and verifies', () => {
    let found: { time: number; value: string } | undefined;
    for (let time = 1700000000; time < 1700001000 && !found; time++) {
      const value = mintCookieValue('jan', time, SECRET, SALT, 'sha256');
      if (Buffer.from(value, 'base64url').subarray('jan:'.length + 9).includes(0x3a)) found = { time, value };
    }
    assert.ok(found, 'no MAC with a colon byte in 1000 tries');
    const decoded = token(decodeCookieValue(found.value));
    assert.equal(decoded.mac.length, 32);
    assert.ok(decoded.mac.includes(0x3a));
    assert.equal(parseTimeHex(decoded.timeHex), found.time);
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, DEFAULT_ALGORITHMS), true);
  });

  for (const name of ['zoë', '日本語', 'emoji 🦊', 'a b', 'x@y.z']) {
    test(`the UTF-8 name ${JSON.stringify(name)} survives`, () => {
      const decoded = token(decodeCookieValue(mintCookieValue(name, 1700000000, SECRET, SALT, 'sha256')));
      assert.equal(decoded.name, name);
      assert.equal(verifyCookieMac(decoded, [SECRET], SALT, DEFAULT_ALGORITHMS), true);
    });
  }

  test('a name with a colon is cut at the colon and never verifies (as in CouchDB)', () => {
    const decoded = token(decodeCookieValue(mintCookieValue('a:b', 1700000000, SECRET, SALT, 'sha256')));
    assert.equal(decoded.name, 'a');
    assert.equal(decoded.timeHex, 'b');
    assert.equal(verifyCookieMac(decoded, [SECRET], SALT, DEFAULT_ALGORITHMS), false);
  });

  test('a name that is not UTF-8 is replaced, but the MAC is checked on the raw bytes', () => {
    const decoded = token(decodeCookieValue(b64url(Buffer.from([0xff, 0x3a, 0x31, 0x3a, 0x00]))));
    assert.equal(decoded.name, '\ufffd');
    assert.deepEqual([...decoded.signed], [0xff, 0x3a, 0x31]);
  });
});

describe('AuthSession codec: TIMEHEX', () => {
  const table: [string, number | undefined][] = [
    ['6553F100', 1700000000],
    ['6553f100', 1700000000],
    ['0', 0],
    ['00FF', 255],
    ['', undefined],
    ['xyz', undefined],
    ['6553F10G', undefined],
    ['-1A', undefined],
    ['+1A', undefined],
    [' 1A', undefined],
    ['1A ', undefined],
    ['0x1A', undefined],
    ['1.5', undefined],
    ['F'.repeat(300), undefined],
  ];
  for (const [text, expected] of table) {
    test(`${JSON.stringify(text.length > 20 ? `${text.slice(0, 8)}…` : text)} → ${expected}`, () => assert.equal(parseTimeHex(text), expected));
  }
});

describe('AuthSession codec: expiry and refresh', () => {
  const issued = 1700000000;

  test('R-LIMIT-1: valid just before the timeout, expired exactly at it and after', () => {
    assert.equal(isExpired(issued, issued, 600), false);
    assert.equal(isExpired(issued, issued + 599, 600), false);
    assert.equal(isExpired(issued, issued + 600, 600), true);
    assert.equal(isExpired(issued, issued + 601, 600), true);
  });

  test('R-COOKIE-3: the timeout is a parameter (chttpd_auth/timeout)', () => {
    assert.equal(isExpired(issued, issued + 3599, 3600), false);
    assert.equal(isExpired(issued, issued + 3600, 3600), true);
    assert.equal(isExpired(issued, issued, 0), true);
  });

  test('a timestamp in the future is valid', () => {
    assert.equal(isExpired(issued + 100000, issued, 600), false);
  });

  test('refresh only once more than 10 % of the timeout has elapsed', () => {
    assert.equal(needsRefresh(issued, issued, 600), false);
    assert.equal(needsRefresh(issued, issued + 59, 600), false);
    assert.equal(needsRefresh(issued, issued + 60, 600), false);
    assert.equal(needsRefresh(issued, issued + 61, 600), true);
    assert.equal(needsRefresh(issued, issued + 599, 600), true);
  });

  test('the 10 % boundary for a timeout that does not divide by 10', () => {
    // 0.9 × 7 = 6.3: one second of age leaves 6 < 6.3.
    assert.equal(needsRefresh(issued, issued, 7), false);
    assert.equal(needsRefresh(issued, issued + 1, 7), true);
    assert.equal(needsRefresh(issued, issued + 1, 10), false);
    assert.equal(needsRefresh(issued, issued + 2, 10), true);
  });

  test('a future timestamp needs no refresh', () => {
    assert.equal(needsRefresh(issued + 1000, issued, 600), false);
  });
});

describe('firstAuthSessionCookie', () => {
  const table: [string, string | undefined, string | undefined][] = [
    ['no header', undefined, undefined],
    ['empty header', '', undefined],
    ['only cookie', 'AuthSession=abc', 'abc'],
    ['among others', 'a=b; AuthSession=abc; c=d', 'abc'],
    ['first of two wins', 'AuthSession=first; AuthSession=second', 'first'],
    ['empty first wins over a later value', 'AuthSession=; AuthSession=second', ''],
    ['empty value', 'AuthSession=', ''],
    ['bare name', 'x=1; AuthSession', ''],
    ['whitespace around', '  x=1 ;   AuthSession =  abc  ; y=2', 'abc'],
    ['tabs around', 'x=1;\tAuthSession=abc\t', 'abc'],
    ['no space after ;', 'x=1;AuthSession=abc', 'abc'],
    ['name is case-sensitive', 'authsession=abc', undefined],
    ['longer name', 'XAuthSession=abc', undefined],
    ['value that mentions it', 'a=AuthSession=x', undefined],
    ['value keeps later "="', 'AuthSession=a=b', 'a=b'],
    ['quoted value is unwrapped', 'AuthSession="abc"', 'abc'],
    ['a lone quote stays', 'AuthSession="', '"'],
  ];
  for (const [title, header, expected] of table) {
    test(`${title} → ${JSON.stringify(expected)}`, () => assert.equal(firstAuthSessionCookie(header), expected));
  }
});

describe('AuthSession codec: properties', () => {
  const name = fc
    .string({ unit: 'binary', maxLength: 40 })
    .filter((text) => !text.includes(':') && Buffer.from(text, 'utf8').toString('utf8') === text);
  const time = fc.nat({ max: Number.MAX_SAFE_INTEGER });
  const secret = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
  const salt = fc.string({ unit: 'binary', maxLength: 40 });
  const algorithm = fc.constantFrom('sha256', 'sha', 'sha224', 'sha384', 'sha512', 'blake2s', 'blake2b');
  const all = parseHashAlgorithms('sha256, sha, sha224, sha384, sha512, blake2s, blake2b');

  test('R-CK-2: mint → decode → verify round-trips for any name, time, secret and salt', () => {
    fc.assert(
      fc.property(name, time, secret, salt, algorithm, (n, t, s, sa, alg) => {
        const value = mintCookieValue(n, t, s, sa, alg);
        assert.match(value, /^[A-Za-z0-9_-]+$/);
        const decoded = token(decodeCookieValue(value));
        assert.equal(decoded.name, n);
        assert.equal(parseTimeHex(decoded.timeHex), t);
        assert.equal(verifyCookieMac(decoded, [s], sa, [alg]), true);
        assert.equal(verifyCookieMac(decoded, ['wrong', s], sa, all), true);
        assert.equal(isExpired(t, t, 600), false);
      }),
      { numRuns: 3000, seed: 20231114 },
    );
  });

  test('flipping any bit pattern of any decoded byte never verifies', () => {
    fc.assert(
      fc.property(name, time, secret, salt, algorithm, fc.nat(), fc.integer({ min: 1, max: 255 }), (n, t, s, sa, alg, at, mask) => {
        const bytes = Buffer.from(mintCookieValue(n, t, s, sa, alg), 'base64url');
        bytes[at % bytes.length] ^= mask;
        const decoded = decodeCookieValue(b64url(bytes));
        assert.equal(verifyCookieMac(decoded, [s], sa, all), false);
      }),
      { numRuns: 3000, seed: 1112283 },
    );
  });

  test('truncating the cookie value never verifies', () => {
    fc.assert(
      fc.property(name, time, secret, salt, algorithm, fc.nat(), (n, t, s, sa, alg, cut) => {
        const value = mintCookieValue(n, t, s, sa, alg);
        const decoded = decodeCookieValue(value.slice(0, cut % value.length));
        assert.equal(verifyCookieMac(decoded, [s], sa, all), false);
      }),
      { numRuns: 3000, seed: 92 },
    );
  });

  test('decoding never throws, and a token re-encodes to the same bytes', () => {
    const anyText = fc.string({ unit: 'binary', maxLength: 120 });
    const alphabet = fc.stringMatching(/^[A-Za-z0-9_-]{0,120}$/);
    const colons = fc.uint8Array({ maxLength: 60 }).map((bytes) => b64url(Buffer.from(bytes.map((b) => (b % 5 === 0 ? 0x3a : b)))));
    fc.assert(
      fc.property(fc.oneof(anyText, alphabet, colons), (value) => {
        const decoded = decodeCookieValue(value);
        assert.ok(['empty', 'malformed', 'token'].includes(decoded.kind));
        if (decoded.kind === 'token') {
          const again = Buffer.from([...decoded.signed, 0x3a, ...decoded.mac]);
          assert.deepEqual([...again], [...Buffer.from(value, 'base64url')]);
          assert.equal(decoded.signed.filter((b) => b === 0x3a).length, 1);
        }
      }),
      { numRuns: 5000, seed: 7 },
    );
  });

  test('firstAuthSessionCookie never throws and finds the first AuthSession', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'binary', maxLength: 200 }), { nil: undefined }), (header) => {
        const found = firstAuthSessionCookie(header);
        assert.ok(found === undefined || typeof found === 'string');
        if (found !== undefined) assert.ok(header!.includes('AuthSession'));
      }),
      { numRuns: 5000, seed: 8 },
    );
    const cookieName = fc.constantFrom('AuthSession', 'a', 'b', 'authsession', 'AuthSessionX');
    const cookieValue = fc.stringMatching(/^[A-Za-z0-9_=-]{0,12}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(cookieName, cookieValue), { maxLength: 6 }), (pairs) => {
        const header = pairs.map(([k, v]) => `${k}=${v}`).join('; ');
        assert.equal(firstAuthSessionCookie(header), pairs.find(([k]) => k === 'AuthSession')?.[1]);
      }),
      { numRuns: 3000, seed: 9 },
    );
  });
});
