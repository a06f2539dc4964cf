import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeMessage, encodeMessage, type ClusterMessage } from '../../../src/cluster/messages.js';

describe('cluster messages', () => {
  const examples: ClusterMessage[] = [
    { topic: 'users', ids: ['org.couchdb.user:bob', 'org.couchdb.user:eve'] },
    { topic: 'users', ids: 'all' },
    { topic: 'lockout', peer: '10.0.0.7', name: 'bob', salt: 'abc' },
    { topic: 'secret' },
    { topic: 'totp', name: 'bob', salt: 'abc', counter: 57_000_123 },
    { topic: 'db', dbs: ['a', 'b/c'] },
    { topic: 'ddocs', db: 'app/x' },
    { topic: 'config', section: 'log', key: 'level', value: 'debug' },
    { topic: 'config', section: 'admins', key: 'ops', value: null },
  ];

  test('every message reads back as itself after encoding', () => {
    for (const message of examples) {
      const { topic, payload } = encodeMessage(message);
      assert.deepEqual(decodeMessage(topic, payload), message);
    }
  });

  test('a long list of user ids travels as "all", so a NOTIFY payload stays small', () => {
    const ids = Array.from({ length: 400 }, (_, i) => `org.couchdb.user:user-number-${i}`);
    const { payload } = encodeMessage({ topic: 'users', ids });
    assert.equal(payload, '"all"');
    assert.deepEqual(decodeMessage('users', payload), { topic: 'users', ids: 'all' });
  });

  test('malformed or foreign messages decode to nothing and are never acted on', () => {
    const bad: Array<[string, string]> = [
      ['users', 'not json'],
      ['users', '[1,2]'],
      ['users', '"some"'],
      ['lockout', '["a","b"]'],
      ['lockout', '["a","b",3]'],
      ['totp', '["a","b","3"]'],
      ['totp', '["a","b",1.5]'],
      ['db', '{"a":1}'],
      ['ddocs', '["a"]'],
      ['config', '["log","level"]'],
      ['config', '["log","level",3]'],
      ['unknown', '[]'],
      ['__proto__', '{}'],
    ];
    for (const [topic, payload] of bad) assert.equal(decodeMessage(topic, payload), undefined, `${topic} ${payload}`);
  });
});
