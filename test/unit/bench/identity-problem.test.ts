import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { identityProblem, type Scenario } from '../../../bench/auth-setup.js';

const jwt: Scenario = { name: 'JWT HS256 GET /_session', request: { path: '/_session' }, identity: { name: 'bench1', handler: 'jwt' } };
const session = (name: string | null, authenticated?: string): string => JSON.stringify({ ok: true, userCtx: { name, roles: [] }, info: { authentication_handlers: ['cookie', 'default'], authenticated } });

describe('benchmark scenarios check who the sample answer names', () => {
  test('the expected user, authenticated by the expected handler, passes', () => {
    assert.equal(identityProblem(jwt, session('bench1', 'jwt')), undefined);
  });

  test('an anonymous 200 (a server ignoring the token) is refused, naming what it answered', () => {
    assert.equal(identityProblem(jwt, session(null)), 'answered as null authenticated by null, not "bench1" by "jwt"');
  });

  test('the right user by another handler is refused', () => {
    assert.match(identityProblem(jwt, session('bench1', 'cookie'))!, /authenticated by "cookie"/);
  });

  test('a body that is not JSON is refused', () => {
    assert.match(identityProblem(jwt, '<html>')!, /not JSON/);
  });

  test('a scenario without an identity (the document read) is not checked', () => {
    assert.equal(identityProblem({ name: 'anonymous GET /', request: { path: '/' } }, 'anything'), undefined);
  });
});
