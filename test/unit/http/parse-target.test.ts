import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { parseTarget } from '../../../src/http/target.js';
import { Request } from '../../../src/http/request.js';
import { selectRange } from '../../../src/http/key-range.js';
import { PeerResolver } from '../../../src/http/peer.js';

describe('request target parsing', () => {
  const table: [string, string[] | undefined][] = [
    ['/', []],
    ['/db', ['db']],
    ['/db/', ['db']],
    ['//db//doc', ['db', 'doc']],
    ['/db/a%2Fb', ['db', 'a/b']],
    ['/a%2Fb/_design/x', ['a/b', '_design', 'x']],
    ['/db/_design%2Fx', ['db', '_design/x']],
    ['/db/%E2%9C%93', ['db', '✓']],
    ['/db/%ZZ', undefined],
    ['/db/%E2%9C', undefined],
    ['http://example.org/db/doc?x=1', ['db', 'doc']],
  ];
  for (const [target, segments] of table) {
    test(`${target} → ${JSON.stringify(segments)}`, () => assert.deepEqual(parseTarget(target)?.segments, segments));
  }
  test('the query is parsed with + as a space', () => {
    const target = parseTarget('/x?key=%22a+b%22')!;
    assert.equal(target.search, 'key=%22a+b%22');
    const raw = { method: 'GET', headers: {} } as unknown as IncomingMessage;
    const request = new Request(raw, { segments: target.segments, query: target.search, path: target.path, peer: '127.0.0.1', secure: false, viaTrustedProxy: false, id: 't', limits: { maxRequestBytes: 1024 } });
    assert.equal(request.query.get('key'), '"a b"');
    assert.equal(request.query, request.query, 'parsed once');
  });
});

describe('range selection for _all_dbs', () => {
  const names = ['a', 'b', 'c', 'd'];
  test('start/end keys, inclusive_end, descending, skip, limit', () => {
    assert.deepEqual(selectRange(names, { startKey: 'b' }), ['b', 'c', 'd']);
    assert.deepEqual(selectRange(names, { endKey: 'c' }), ['a', 'b', 'c']);
    assert.deepEqual(selectRange(names, { endKey: 'c', inclusiveEnd: false }), ['a', 'b']);
    assert.deepEqual(selectRange(names, { descending: true, startKey: 'c' }), ['c', 'b', 'a']);
    assert.deepEqual(selectRange(names, { skip: 1, limit: 2 }), ['b', 'c']);
    assert.deepEqual(selectRange(names, { startKey: 1 }), names, 'numbers sort before strings');
    assert.deepEqual(selectRange(names, { startKey: ['x'] }), [], 'arrays sort after strings');
  });
});

describe('client address behind trusted proxies', () => {
  const peers = new PeerResolver('127.0.0.1, ::1, 10.0.0.0/8');
  test('a trusted socket peer yields the last X-Forwarded-For entry', () => {
    assert.equal(peers.resolve('127.0.0.1', '1.2.3.4, 5.6.7.8'), '5.6.7.8');
    assert.equal(peers.resolve('::ffff:10.1.2.3', '9.9.9.9'), '9.9.9.9');
  });
  test('an untrusted peer cannot claim another address', () => {
    assert.equal(peers.resolve('192.0.2.7', '1.2.3.4'), '192.0.2.7');
  });
  test('a garbage X-Forwarded-For falls back to the socket', () => {
    assert.equal(peers.resolve('127.0.0.1', 'not-an-ip'), '127.0.0.1');
  });
});
