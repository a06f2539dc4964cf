import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseBasicHeader } from '../../../src/auth/basic-header.js';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('Basic header parser', () => {
  const table: [string, string | undefined, ReturnType<typeof parseBasicHeader>][] = [
    ['no header', undefined, { kind: 'none' }],
    ['Bearer is not Basic', 'Bearer abc', { kind: 'none' }],
    ['lowercase scheme is not Basic', `basic ${b64('a:b')}`, { kind: 'none' }],
    ['two spaces are not the exact prefix', `Basic  ${b64('a:b')}`, { kind: 'invalid' }],
    ['plain credentials', 'Basic Zm9vOmJhcg==', { kind: 'credentials', name: 'foo', password: 'bar' }],
    ['first colon splits, password keeps colons', `Basic ${b64('foo@example.org::bar')}`, { kind: 'credentials', name: 'foo@example.org', password: ':bar' }],
    ['empty password allowed', `Basic ${b64('user:')}`, { kind: 'credentials', name: 'user', password: '' }],
    ['empty name is a (failing) credential', `Basic ${b64(':')}`, { kind: 'credentials', name: '', password: '' }],
    ['no colon is anonymous', `Basic ${b64('nocolon')}`, { kind: 'none' }],
    ['_:_ is the logout credential, anonymous', 'Basic Xzpf', { kind: 'none' }],
    ['x is invalid base64', 'Basic x', { kind: 'invalid' }],
    ['XX= is invalid base64', 'Basic XX=', { kind: 'invalid' }],
    ['!!! is invalid base64', 'Basic !!!', { kind: 'invalid' }],
    ['missing padding is invalid', 'Basic Zm9vOmJhcg', { kind: 'invalid' }],
    ['UTF-8 names survive', `Basic ${b64('zoë:пароль')}`, { kind: 'credentials', name: 'zoë', password: 'пароль' }],
  ];
  for (const [title, header, expected] of table) {
    test(`R-BASIC-1: ${title}`, () => assert.deepEqual(parseBasicHeader(header), expected));
  }

  test('R-BASIC-1: any name without a colon and any password round-trip (property)', () => {
    fc.assert(
      fc.property(fc.string().filter((name) => !name.includes(':')), fc.string(), (name, password) => {
        const parsed = parseBasicHeader(`Basic ${b64(`${name}:${password}`)}`);
        if (name === '_' && password === '_') return assert.deepEqual(parsed, { kind: 'none' });
        assert.deepEqual(parsed, { kind: 'credentials', name, password });
      }),
      { numRuns: 2000, seed: 4242 },
    );
  });

  test('any bytes, invalid UTF-8 included, decode as Node decodes them as UTF-8 (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const text = Buffer.from(bytes).toString('utf8');
        const colon = text.indexOf(':');
        const parsed = parseBasicHeader(`Basic ${Buffer.from(bytes).toString('base64')}`);
        if (colon === -1 || text === '_:_') return assert.deepEqual(parsed, { kind: 'none' });
        assert.deepEqual(parsed, { kind: 'credentials', name: text.slice(0, colon), password: text.slice(colon + 1) });
      }),
      { numRuns: 3000, seed: 99 },
    );
  });

  test('arbitrary header values never throw (property)', () => {
    fc.assert(
      fc.property(fc.string(), (rest) => {
        const parsed = parseBasicHeader(`Basic ${rest}`);
        assert.ok(['none', 'invalid', 'credentials'].includes(parsed.kind));
      }),
      { numRuns: 3000, seed: 77 },
    );
  });
});
