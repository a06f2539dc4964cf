import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AuthChain } from '../../../src/auth/chain.js';
import type { AuthHandler, AuthRequest } from '../../../src/auth/types.js';

const request = (headers: AuthRequest['headers']): AuthRequest => ({ method: 'GET', segments: ['_session'], query: new URLSearchParams(), headers, peer: '127.0.0.1', secure: false });
const open = { requireValidUser: false, requireValidUserExceptForUp: false };

/** A handler that answers for its own header, and records each call of authenticate. */
function headerHandler(name: string, header: string, calls: string[]): AuthHandler {
  return {
    name,
    mayAnswer: (req) => req.headers[header] !== undefined,
    async authenticate(req) {
      calls.push(name);
      const value = req.headers[header];
      return typeof value === 'string' ? { userCtx: { name: value, roles: [] } } : undefined;
    },
  };
}

describe('AuthChain', () => {
  test('a handler whose mayAnswer is false is skipped; the next one that may answer decides', async () => {
    const calls: string[] = [];
    const chain = new AuthChain([headerHandler('first', 'x-first', calls), headerHandler('second', 'x-second', calls)]);
    const outcome = await chain.authenticate(request({ 'x-second': 'bob' }), open);
    assert.deepEqual(calls, ['second']);
    assert.equal(outcome.handler, 'second');
    assert.equal(outcome.userCtx.name, 'bob');
  });

  test('with no handler that may answer the request is anonymous, and none is called', async () => {
    const calls: string[] = [];
    const chain = new AuthChain([headerHandler('first', 'x-first', calls)]);
    const outcome = await chain.authenticate(request({}), open);
    assert.deepEqual(calls, []);
    assert.equal(outcome.userCtx.name, null);
    assert.equal(outcome.handler, undefined);
  });

  test('a handler without mayAnswer is always asked', async () => {
    const calls: string[] = [];
    const plain: AuthHandler = { name: 'plain', authenticate: async () => (calls.push('plain'), undefined) };
    await new AuthChain([plain]).authenticate(request({}), open);
    assert.deepEqual(calls, ['plain']);
  });

  test('a handler that answers without a promise gets the request answered without one; a refusal is still a rejected promise', async () => {
    const now: AuthHandler = { name: 'now', authenticate: (req) => (req.headers['x-now'] === 'bad' ? fail() : { userCtx: { name: 'ann', roles: [] } }) };
    const chain = new AuthChain([now]);
    const answer = chain.authenticate(request({ 'x-now': 'ok' }), open);
    assert.ok(!(answer instanceof Promise));
    assert.deepEqual(answer, { userCtx: { name: 'ann', roles: [] }, handler: 'now', cookieSubject: undefined });
    const refused = chain.authenticate(request({ 'x-now': 'bad' }), open);
    assert.ok(refused instanceof Promise);
    await assert.rejects(refused, /refused/);
  });

  test('the credential expiry comes from the handler that accepted the request, worked out when asked', async () => {
    const asked: string[] = [];
    const expiring: AuthHandler = {
      name: 'expiring',
      mayAnswer: (req) => req.headers['x-until'] !== undefined,
      authenticate: (req) => ({ userCtx: { name: String(req.headers['x-user']), roles: [] } }),
      credentialExpiry: (req, outcome) => (asked.push(String(outcome.userCtx.name)), Number(req.headers['x-until'])),
    };
    const chain = new AuthChain([expiring, headerHandler('plain', 'x-plain', [])]);
    const accepted = await chain.authenticate(request({ 'x-until': '1700000060000', 'x-user': 'ann' }), open);
    assert.deepEqual(asked, []);
    assert.equal(accepted.credentialExpiry?.(), 1700000060000);
    assert.deepEqual(asked, ['ann']);
    const plain = await chain.authenticate(request({ 'x-plain': 'bob' }), open);
    assert.equal(plain.credentialExpiry, undefined);
  });

  test('after a handler that needs a promise, the next handlers are still asked in order', async () => {
    const calls: string[] = [];
    const later: AuthHandler = { name: 'later', authenticate: async () => (calls.push('later'), undefined) };
    const chain = new AuthChain([later, headerHandler('second', 'x-second', calls)]);
    assert.deepEqual(await chain.authenticate(request({ 'x-second': 'bob' }), open), { userCtx: { name: 'bob', roles: [] }, handler: 'second', cookieSubject: undefined });
    assert.deepEqual(calls, ['later', 'second']);
  });
});

function fail(): never {
  throw new Error('refused');
}
