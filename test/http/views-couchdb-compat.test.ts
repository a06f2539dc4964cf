/**
 * View queries answering as CouchDB 3.5 answers where PouchDB's own mapreduce suite (run against
 * CouchDB in its CI) found Divan answering otherwise, on every selected backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKEND_SERVERS } from '../support/backend-servers.js';
import type { TestServer } from '../support/server.js';

const DDOC = {
  views: {
    dups: {
      map: `function (doc) {
        if (!doc.foo) return;
        emit(doc.foo, 'fooValue'); emit(doc.foo);
        emit(doc.bar); emit(doc.bar, 'crayon!'); emit(doc.bar, 'multiple values!'); emit(doc.bar, 'crayon!');
        emit(doc.bar, 2); emit(doc.bar, [1]); emit(doc.bar, { a: 1 }); emit(doc.bar, false);
      }`,
    },
    by_id: { map: 'function (doc) { emit(doc._id, null); }' },
  },
};

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

for (const backend of BACKEND_SERVERS) {
  describe(`${backend.name}: view queries as CouchDB answers them`, () => {
    let server: TestServer;
    before(async () => {
      server = await backend.start();
      await server.admin('/v', { method: 'PUT' });
      const docs = [
        { _id: 'doc1', foo: 'foo', bar: 'bar' },
        { _id: 'doc2', foo: 'foo', bar: 'bar' },
        { _id: 'pic', _attachments: { 'one.png': { content_type: 'image/png', data: PNG.toString('base64') } } },
      ];
      assert.equal((await server.admin('/v/_bulk_docs', { method: 'POST', body: { docs } })).status, 201);
      assert.equal((await server.admin('/v/_design/app', { method: 'PUT', body: DDOC })).status, 201);
    });
    after(async () => server.close());

    test('rows of one document under one key come in Erlang order of their values, in both directions', async () => {
      // Erlang's term order: numbers < false < null < objects < arrays < strings.
      const ofOneDoc = ['2', 'false', 'null', '{"a":1}', '[1]', '"crayon!"', '"crayon!"', '"multiple values!"'];
      const res = await server.admin('/v/_design/app/_view/dups?key="bar"');
      assert.deepEqual(res.body.rows.map((row: { value: unknown }) => JSON.stringify(row.value)), [...ofOneDoc, ...ofOneDoc]);
      assert.deepEqual(res.body.rows.map((row: { id: string }) => row.id), [...Array(8).fill('doc1'), ...Array(8).fill('doc2')]);
      // CouchDB stores them as one entry, so descending reverses the documents, not their values.
      const down = await server.admin('/v/_design/app/_view/dups?key="bar"&descending=true');
      assert.deepEqual(down.body.rows.map((row: { value: unknown }) => JSON.stringify(row.value)), [...ofOneDoc, ...ofOneDoc]);
      assert.deepEqual(down.body.rows.map((row: { id: string }) => row.id), [...Array(8).fill('doc2'), ...Array(8).fill('doc1')]);
      const foo = await server.admin('/v/_design/app/_view/dups?key="foo"');
      assert.deepEqual(foo.body.rows.map((row: { value: unknown }) => row.value), [null, 'fooValue', null, 'fooValue']);
    });

    test('attachments=true with include_docs inlines attachment data in view rows and _all_docs', async () => {
      for (const path of ['/v/_design/app/_view/by_id?key="pic"&include_docs=true&attachments=true', '/v/_all_docs?key="pic"&include_docs=true&attachments=true']) {
        const res = await server.admin(path);
        assert.equal(res.status, 200, path);
        const attachment = res.body.rows[0].doc._attachments['one.png'];
        assert.equal(attachment.data, PNG.toString('base64'), path);
        assert.equal(attachment.stub, undefined, path);
      }
      const stubs = await server.admin('/v/_design/app/_view/by_id?key="pic"&include_docs=true');
      assert.equal(stubs.body.rows[0].doc._attachments['one.png'].stub, true);
    });

    test('a reversed key range is 400 query_parse_error on a view; _all_docs answers no rows', async () => {
      const forward = await server.admin('/v/_design/app/_view/by_id?startkey="5"&endkey="4"');
      assert.deepEqual([forward.status, forward.body], [400, { error: 'query_parse_error', reason: 'No rows can match your key range, reverse your start_key and end_key or set descending=true' }]);
      const backward = await server.admin('/v/_design/app/_view/by_id?startkey="4"&endkey="5"&descending=true');
      assert.deepEqual([backward.status, backward.body], [400, { error: 'query_parse_error', reason: 'No rows can match your key range, reverse your start_key and end_key or set descending=false' }]);
      const keyThenStart = await server.admin('/v/_design/app/_view/by_id?key="a"&startkey="b"');
      assert.equal(keyThenStart.status, 400);
      const byDocId = await server.admin('/v/_design/app/_view/by_id?startkey="a"&endkey="a"&startkey_docid="z"&endkey_docid="b"');
      assert.equal(byDocId.status, 200, 'equal keys are never a reversed range');
      const sameKeyDocIds = await server.admin('/v/_design/app/_view/dups?startkey="bar"&endkey="bar"&startkey_docid="doc2"&endkey_docid="doc1"');
      assert.equal(sameKeyDocIds.status, 200, 'identical start and end keys are never a reversed range');
      for (const ok of ['startkey="4"&endkey="5"', 'startkey="5"&endkey="4"&descending=true', 'startkey="5"', 'endkey="4"']) {
        assert.equal((await server.admin(`/v/_design/app/_view/by_id?${ok}`)).status, 200, ok);
      }
      const allDocs = await server.admin('/v/_all_docs?startkey="5"&endkey="4"');
      assert.deepEqual([allDocs.status, allDocs.body.rows], [200, []]);
    });
  });
}
