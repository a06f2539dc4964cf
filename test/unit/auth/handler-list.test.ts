import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_AUTHENTICATION_HANDLERS, parseHandlerList } from '../../../src/auth/handler-list.js';

describe('[chttpd] authentication_handlers parser', () => {
  test('R-METH-3: the default list is cookie then default', () => {
    const parsed = parseHandlerList(DEFAULT_AUTHENTICATION_HANDLERS);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.handlers.map((handler) => handler.name), ['cookie', 'default']);
  });

  test('R-METH-3: order is kept, whitespace is free, legacy module accepted', () => {
    const parsed = parseHandlerList(
      '{chttpd_auth, jwt_authentication_handler},{couch_httpd_auth,proxy_authentication_handler} ,  {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}',
    );
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.handlers.map((handler) => handler.name), ['jwt', 'proxy', 'cookie', 'default']);
  });

  test('the misspelled proxy_authentification_handler alias is the proxy handler', () => {
    const parsed = parseHandlerList('{chttpd_auth, proxy_authentification_handler}');
    assert.ok(parsed.ok);
    assert.equal(parsed.handlers[0]!.name, 'proxy');
  });

  test('a three-element tuple keeps its argument out of the split', () => {
    const parsed = parseHandlerList('{chttpd_auth, cookie_authentication_handler, <<"x,y">>}, {chttpd_auth, default_authentication_handler}');
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.handlers.map((handler) => handler.name), ['cookie', 'default']);
  });

  for (const bad of ['', '{chttpd_auth, nope_handler}', '{other_mod, cookie_authentication_handler}', 'cookie', '{chttpd_auth cookie_authentication_handler}']) {
    test(`unknown or malformed ${JSON.stringify(bad)} is refused with a reason`, () => {
      const parsed = parseHandlerList(bad);
      assert.equal(parsed.ok, false);
      assert.ok(!parsed.ok && parsed.reason.length > 0);
    });
  }
});
