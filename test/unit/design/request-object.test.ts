import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requestObject, type RequestFacts } from '../../../src/design/request-object.js';

const FACTS: RequestFacts = {
  method: 'GET',
  segments: ['db', '_changes'],
  rawPath: '/db/_changes?filter=app/mine&x=1',
  query: new URLSearchParams('filter=app/mine&x=1'),
  rawHeaders: ['Host', 'localhost', 'Authorization', 'Basic YTpi', 'Cookie', 'AuthSession=secret; theme=dark', 'X-Trace', 'abc'],
  cookie: 'AuthSession=secret; theme=dark',
  peer: '10.0.0.7',
  userCtx: { name: 'ann', roles: ['reader'] },
};
const DB = { name: 'db', info: { db_name: 'db' }, secObj: { members: { names: ['ann'] } } };

describe('CouchDB\'s req object, from plain request facts', () => {
  test('carries the request\'s paths, query, peer, user (with db) and security object', () => {
    const req = requestObject(FACTS, DB);
    assert.equal(req['method'], 'GET');
    assert.deepEqual(req['path'], ['db', '_changes']);
    assert.deepEqual(req['requested_path'], ['db', '_changes']);
    assert.equal(req['raw_path'], '/db/_changes?filter=app/mine&x=1');
    assert.deepEqual(req['query'], { filter: 'app/mine', x: '1' });
    assert.equal(req['peer'], '10.0.0.7');
    assert.deepEqual(req['userCtx'], { db: 'db', name: 'ann', roles: ['reader'] });
    assert.deepEqual(req['secObj'], DB.secObj);
    assert.deepEqual(req['info'], DB.info);
    assert.equal(req['id'], null);
    assert.match(String(req['uuid']), /^[0-9a-f]{32}$/);
  });

  test('never hands the caller\'s credentials to design-document JavaScript', () => {
    const req = requestObject(FACTS, DB);
    assert.deepEqual(req['headers'], { Host: 'localhost', 'X-Trace': 'abc' });
    assert.deepEqual(req['cookie'], { theme: 'dark' });
  });

  test('header names are canonical as CouchDB hands them on (x-foo-bar → X-Foo-Bar), so req.headers.Accept is found', () => {
    const req = requestObject({ ...FACTS, rawHeaders: ['accept', 'text/html', 'x-foo-BAR', '1'] }, DB);
    assert.deepEqual(req['headers'], { Accept: 'text/html', 'X-Foo-Bar': '1' });
  });

  test('the body is the JSON text of a POST, "undefined" otherwise; a document id is passed on', () => {
    assert.equal(requestObject(FACTS, DB)['body'], 'undefined');
    assert.equal(requestObject({ ...FACTS, method: 'POST', body: { a: 1 } }, DB)['body'], '{"a":1}');
    assert.equal(requestObject({ ...FACTS, method: 'POST' }, DB)['body'], '{}');
    assert.equal(requestObject(FACTS, DB, 'doc1')['id'], 'doc1');
  });
});
