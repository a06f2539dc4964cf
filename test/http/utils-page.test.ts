// The login page's pure functions (static/session.js), imported in Node: the page script only
// touches the DOM when a document exists.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

interface PageModule {
  SESSION_PAGE: string;
  DEFAULT_TIMEOUT_SECONDS: number;
  safeReturnPath(value: unknown, origin?: string): string | undefined;
  loginErrorMessage(status: number, body: unknown): string;
  serverErrorMessage(what: string, status: number, body: unknown): string;
  formatDuration(seconds: number): string;
}

const page = (await import(new URL('../../../static/session.js', import.meta.url).href)) as PageModule;
const ORIGIN = 'http://127.0.0.1:5984';

describe('static/session.js', () => {
  test('constants: the page path and CouchDB\'s default cookie timeout', () => {
    assert.equal(page.SESSION_PAGE, '/_utils/session.html');
    assert.equal(page.DEFAULT_TIMEOUT_SECONDS, 600);
  });

  test('safeReturnPath keeps same-origin paths, with their query and fragment', () => {
    for (const path of ['/', '/private', '/private/_all_docs?include_docs=true', '/db/doc%2Fid#top', '/_utils/session.html', '/a//b']) {
      assert.equal(page.safeReturnPath(path, ORIGIN), path, path);
      assert.equal(page.safeReturnPath(path), path, `${path} without an origin`);
    }
  });

  test('safeReturnPath refuses everything that could leave the origin or is not a path', () => {
    const refused: unknown[] = [
      '',
      'private',
      'http://evil.example/',
      'https://evil.example/x',
      '//evil.example/',
      '///evil.example/',
      '/\\evil.example/',
      '\\\\evil.example',
      '/x\\..\\..\\',
      'javascript:alert(1)',
      ' /private',
      '/\t/evil.example',
      '/\n/evil.example',
      '/private\r\nSet-Cookie: x',
      '/\u0000',
      '/\u007f',
      '/\u0085',
      undefined,
      null,
      42,
      ['/private'],
    ];
    for (const value of refused) {
      assert.equal(page.safeReturnPath(value, ORIGIN), undefined, JSON.stringify(value));
      assert.equal(page.safeReturnPath(value), undefined, `${JSON.stringify(value)} without an origin`);
    }
  });

  test('loginErrorMessage: wrong credentials and lockout in words; other errors keep the server reason', () => {
    const wrong = page.loginErrorMessage(401, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
    assert.match(wrong, /Wrong user name or password/);
    assert.match(wrong, /one-time code/, 'a TOTP failure answers the same 401');
    const locked = page.loginErrorMessage(403, { error: 'forbidden', reason: 'Account is temporarily locked due to multiple authentication failures' });
    assert.match(locked, /Too many failed attempts/);
    assert.match(locked, /locked for a few minutes/);
    const prf = page.loginErrorMessage(403, { error: 'forbidden', reason: 'PRF is invalid' });
    assert.equal(prf, 'The server refused the login (403: PRF is invalid).');
    const crash = page.loginErrorMessage(500, { error: 'unknown_error', reason: 'badarg' });
    assert.match(crash, /the server had a problem \(500: badarg\)/);
    assert.equal(page.loginErrorMessage(400, undefined), 'The server refused the login (400).');
  });

  test('formatDuration', () => {
    assert.equal(page.formatDuration(600), '10 minutes');
    assert.equal(page.formatDuration(60), '1 minute');
    assert.equal(page.formatDuration(90), '90 seconds');
    assert.equal(page.formatDuration(7200), '2 hours');
    assert.equal(page.formatDuration(3600), '60 minutes');
  });
});
