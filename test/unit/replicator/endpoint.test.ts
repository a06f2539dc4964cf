import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEndpoint } from '../../../src/replicator/endpoint.js';
import { ReplicationSpecError } from '../../../src/replicator/replication-errors.js';

const PROTOCOLS = ['http', 'https'];

test('credentials leave the URL and the headers; the URL gets its trailing slash', () => {
  const endpoint = parseEndpoint({ url: 'http://ann:p%40ss@host:5984/db', headers: { 'X-Auth-CouchDB-UserName': 'ann' } }, 'source', PROTOCOLS);
  assert.equal(endpoint.url, 'http://host:5984/db/');
  assert.deepEqual(endpoint.basic, { username: 'ann', password: 'p@ss' });
  assert.deepEqual(endpoint.headers, [['X-Auth-CouchDB-UserName', 'ann']]);
  assert.equal(endpoint.session, true, 'credentials log in with a cookie session by default');
});

test('auth.basic wins over the URL, which wins over a Basic header (couch_replicator_utils)', () => {
  const basicHeader = `Basic ${Buffer.from('hdr:h').toString('base64')}`;
  assert.equal(parseEndpoint({ url: 'http://url:u@h/db', auth: { basic: { username: 'auth', password: 'a' } }, headers: { Authorization: basicHeader } }, 'source', PROTOCOLS).basic?.username, 'auth');
  assert.equal(parseEndpoint({ url: 'http://url:u@h/db', headers: { Authorization: basicHeader } }, 'source', PROTOCOLS).basic?.username, 'url');
  const fromHeader = parseEndpoint({ url: 'http://h/db', headers: { Authorization: basicHeader } }, 'source', PROTOCOLS);
  assert.equal(fromHeader.basic?.username, 'hdr');
  assert.deepEqual(fromHeader.headers, []);
});

test('a bearer header stays a header, without a session; auth.session false keeps Basic', () => {
  const jwt = parseEndpoint({ url: 'http://h/db', headers: { Authorization: 'Bearer x.y.z' } }, 'source', PROTOCOLS);
  assert.equal(jwt.basic, undefined);
  assert.equal(jwt.session, false);
  assert.deepEqual(jwt.headers, [['Authorization', 'Bearer x.y.z']]);
  assert.equal(parseEndpoint({ url: 'http://a:b@h/db', auth: { session: false } }, 'source', PROTOCOLS).session, false);
});

test('refusals: a bare name, another scheme, a URL that does not parse', () => {
  const reasonOf = (spec: unknown): string => {
    try {
      parseEndpoint(spec as never, 'source', PROTOCOLS);
    } catch (error) {
      assert.ok(error instanceof ReplicationSpecError);
      return `${error.status} ${error.error}: ${error.reason}`;
    }
    return 'accepted';
  };
  assert.equal(reasonOf('mydb'), '400 bad_request: local_endpoints_not_supported');
  assert.equal(reasonOf('ftp://h/db'), '400 bad_request: local_endpoints_not_supported');
  assert.equal(reasonOf({ url: 'ftp://h/db' }), '400 invalid_replication: endpoint has an invalid url');
  assert.equal(reasonOf({ url: 'http://' }), '400 invalid_replication: endpoint has an invalid url');
  assert.equal(parseEndpoint('http://h/db?x=1', 'source', PROTOCOLS).url, 'http://h/db?x=1', 'no slash after a query');
});
