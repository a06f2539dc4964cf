import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { mintCookieValue } from '../../../../src/auth/cookie/codec.js';
import {
  authSessionSetCookie,
  cookieExpiresDate,
  isInvalidSameSite,
  isSafeCookieDomain,
  isSafeCookieValue,
  sameSiteAttribute,
  type CookieSettings,
} from '../../../../src/auth/cookie/set-cookie.js';

const NOW = 1700000000000;
const EXPIRES = 'Expires=Tue, 14-Nov-2023 22:23:20 GMT';
const DEFAULTS: CookieSettings = { timeoutSeconds: 600, persistent: true, secure: false, domain: '', sameSite: '' };
const SESSION: CookieSettings = { ...DEFAULTS, persistent: false };
const with_ = (overrides: Partial<CookieSettings>): CookieSettings => ({ ...DEFAULTS, ...overrides });

describe('Set-Cookie: the expiry date', () => {
  test('1700000000 s + 600 s is Tue, 14-Nov-2023 22:23:20 GMT', () => {
    assert.equal(cookieExpiresDate(1700000600), 'Tue, 14-Nov-2023 22:23:20 GMT');
  });

  test('it is the HTTP date with dashes, day and month zero-padded', () => {
    assert.equal(new Date(1700000600 * 1000).toUTCString(), 'Tue, 14 Nov 2023 22:23:20 GMT');
    assert.equal(cookieExpiresDate(0), 'Thu, 01-Jan-1970 00:00:00 GMT');
    assert.equal(cookieExpiresDate(Date.UTC(2024, 1, 29, 3, 4, 5) / 1000), 'Thu, 29-Feb-2024 03:04:05 GMT');
  });

  test('any instant formats like toUTCString with dashes (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253402300799 }), (seconds) => {
        const [weekday, day, month, year, clock] = new Date(seconds * 1000).toUTCString().split(' ');
        assert.equal(cookieExpiresDate(seconds), `${weekday} ${day}-${month}-${year} ${clock} GMT`);
      }),
      { numRuns: 2000, seed: 1700 },
    );
  });
});

describe('Set-Cookie: attributes and their order (reference §3.5)', () => {
  test('R-COOKIE-2: default (persistent) cookie over plain HTTP', () => {
    assert.equal(authSessionSetCookie('v', DEFAULTS, NOW), `AuthSession=v; Version=1; ${EXPIRES}; Max-Age=600; Path=/; HttpOnly`);
  });

  test('Expires counts from the current whole second', () => {
    assert.equal(authSessionSetCookie('v', DEFAULTS, NOW + 999), `AuthSession=v; Version=1; ${EXPIRES}; Max-Age=600; Path=/; HttpOnly`);
  });

  test('R-COOKIE-4: allow_persistent_cookies=false gives exactly Version=1; Path=/; HttpOnly', () => {
    assert.equal(authSessionSetCookie('v', SESSION, NOW), 'AuthSession=v; Version=1; Path=/; HttpOnly');
  });

  test('R-COOKIE-3: Max-Age and Expires follow the timeout', () => {
    assert.equal(
      authSessionSetCookie('v', with_({ timeoutSeconds: 3600 }), NOW),
      'AuthSession=v; Version=1; Expires=Tue, 14-Nov-2023 23:13:20 GMT; Max-Age=3600; Path=/; HttpOnly',
    );
  });

  test('a negative timeout is clamped to 0, as mochiweb does', () => {
    assert.equal(
      authSessionSetCookie('v', with_({ timeoutSeconds: -5 }), NOW),
      'AuthSession=v; Version=1; Expires=Tue, 14-Nov-2023 22:13:20 GMT; Max-Age=0; Path=/; HttpOnly',
    );
  });

  test('Secure comes after Max-Age and before Path', () => {
    assert.equal(authSessionSetCookie('v', with_({ secure: true }), NOW), `AuthSession=v; Version=1; ${EXPIRES}; Max-Age=600; Secure; Path=/; HttpOnly`);
    assert.equal(authSessionSetCookie('v', { ...SESSION, secure: true }, NOW), 'AuthSession=v; Version=1; Secure; Path=/; HttpOnly');
  });

  test('Domain comes after Secure and before Path', () => {
    assert.equal(
      authSessionSetCookie('v', with_({ domain: 'example.org' }), NOW),
      `AuthSession=v; Version=1; ${EXPIRES}; Max-Age=600; Domain=example.org; Path=/; HttpOnly`,
    );
  });

  test('everything at once, in mochiweb order', () => {
    assert.equal(
      authSessionSetCookie('v', with_({ secure: true, domain: '.example.org', sameSite: 'strict' }), NOW),
      `AuthSession=v; Version=1; ${EXPIRES}; Max-Age=600; Secure; Domain=.example.org; Path=/; HttpOnly; SameSite=Strict`,
    );
  });

  const sameSite: [string, string | undefined, boolean][] = [
    ['None', 'None', false],
    ['none', 'None', false],
    ['Lax', 'Lax', false],
    ['lax', 'Lax', false],
    ['LAX', 'Lax', false],
    ['Strict', 'Strict', false],
    ['strict', 'Strict', false],
    ['sTrIcT', 'Strict', false],
    ['', undefined, false],
    ['invalid', undefined, true],
    ['lax ', undefined, true],
    ['lax; Secure', undefined, true],
  ];
  for (const [raw, attribute, invalid] of sameSite) {
    test(`same_site ${JSON.stringify(raw)} → ${attribute ? `SameSite=${attribute}` : 'omitted'}${invalid ? ' (invalid)' : ''}`, () => {
      assert.equal(sameSiteAttribute(raw), attribute);
      assert.equal(isInvalidSameSite(raw), invalid);
      const suffix = attribute === undefined ? '' : `; SameSite=${attribute}`;
      assert.equal(authSessionSetCookie('v', { ...SESSION, sameSite: raw }, NOW), `AuthSession=v; Version=1; Path=/; HttpOnly${suffix}`);
    });
  }
});

describe('Set-Cookie: the clearing cookie', () => {
  test('R-COOKIE-5: empty value, same attributes, Max-Age=600 (not 0)', () => {
    assert.equal(authSessionSetCookie('', DEFAULTS, NOW), `AuthSession=; Version=1; ${EXPIRES}; Max-Age=600; Path=/; HttpOnly`);
  });

  test('R-COOKIE-5: Domain and SameSite are kept when configured', () => {
    assert.equal(
      authSessionSetCookie('', with_({ domain: 'example.org', sameSite: 'Lax' }), NOW),
      `AuthSession=; Version=1; ${EXPIRES}; Max-Age=600; Domain=example.org; Path=/; HttpOnly; SameSite=Lax`,
    );
  });

  test('non-persistent clearing cookie', () => {
    assert.equal(authSessionSetCookie('', SESSION, NOW), 'AuthSession=; Version=1; Path=/; HttpOnly');
  });
});

describe('Set-Cookie: no header injection', () => {
  const hostile = [
    'example.org; Secure',
    'example.org\r\nSet-Cookie: AuthSession=evil',
    'example.org\nX: y',
    'exa mple.org',
    'exa\tmple.org',
    'example.org\u0000',
    'example.org\u007f',
    'ex,ample.org',
    'ex"ample.org',
    'ex=ample.org',
    'exämple.org',
    'example.org:5984',
  ];
  for (const domain of hostile) {
    test(`cookie_domain ${JSON.stringify(domain).replace('\u007f', '\\u007f')} is left out`, () => {
      assert.equal(isSafeCookieDomain(domain), false);
      assert.equal(authSessionSetCookie('v', { ...SESSION, domain }, NOW), 'AuthSession=v; Version=1; Path=/; HttpOnly');
    });
  }

  for (const domain of ['example.org', '.example.org', 'localhost', 'couch-1.internal', '127.0.0.1', 'my_host']) {
    test(`cookie_domain ${JSON.stringify(domain)} is kept`, () => {
      assert.equal(isSafeCookieDomain(domain), true);
      assert.equal(authSessionSetCookie('v', { ...SESSION, domain }, NOW), `AuthSession=v; Version=1; Domain=${domain}; Path=/; HttpOnly`);
    });
  }

  test('no domain string can add an attribute or a control character (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (domain) => {
        const header = authSessionSetCookie('v', { ...SESSION, domain }, NOW);
        assert.doesNotMatch(header, /[\u0000-\u001f\u007f]/);
        const attributes = header.split('; ');
        assert.ok(attributes.length === 4 || attributes.length === 5, header);
        if (attributes.length === 5) assert.equal(attributes[2], `Domain=${domain}`);
      }),
      { numRuns: 3000, seed: 5984 },
    );
  });

  for (const value of ['a;b', 'a b', 'a\r\nX: y', '"quoted"', 'a,b', 'back\\slash', 'é']) {
    test(`the value ${JSON.stringify(value)} is refused as a programming error`, () => {
      assert.equal(isSafeCookieValue(value), false);
      assert.throws(() => authSessionSetCookie(value, DEFAULTS, NOW), TypeError);
    });
  }

  test('every minted value is a safe cookie value (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }).filter((n) => !n.includes(':')), fc.nat(), (name, time) => {
        assert.equal(isSafeCookieValue(mintCookieValue(name, time, 'secret', 'salt', 'sha256')), true);
      }),
      { numRuns: 1000, seed: 3 },
    );
  });

  test('a non-finite clock is a programming error', () => {
    assert.throws(() => authSessionSetCookie('v', DEFAULTS, Number.NaN), TypeError);
  });
});
