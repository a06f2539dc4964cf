// Design-document JavaScript sees attachment stubs as CouchDB shows them: no `encoding` or
// `encoded_length`, even for an attachment stored gzip-compressed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeOnEachBackend } from '../support/backend-servers.js';

const TEXT = Buffer.from('gzip me, gzip me, gzip me.\n'.repeat(500)).toString('base64');

describeOnEachBackend('gzip-stored attachments in design-document JavaScript', (server) => {
  test('validate_doc_update sees newDoc and oldDoc stubs without encoding fields', async () => {
    assert.equal((await server().admin('/jsgz', { method: 'PUT' })).status, 201);
    const validate = `function (newDoc, oldDoc) {
      var docs = [newDoc, oldDoc];
      for (var i = 0; i < docs.length; i++) {
        var atts = docs[i] && docs[i]._attachments;
        for (var name in atts) if ('encoding' in atts[name] || 'encoded_length' in atts[name]) throw { forbidden: 'saw ' + name };
      }
    }`;
    assert.equal((await server().admin('/jsgz/_design/v', { method: 'PUT', body: { validate_doc_update: validate } })).status, 201);
    const created = await server().admin('/jsgz/doc', { method: 'PUT', body: { _attachments: { 'a.txt': { content_type: 'text/plain', data: TEXT } } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const stored = await server().admin('/jsgz/doc?att_encoding_info=true');
    assert.equal(stored.body._attachments['a.txt'].encoding, 'gzip', 'the attachment is stored compressed');
    const edited = await server().admin('/jsgz/doc', { method: 'PUT', body: { _rev: created.body.rev, more: 1, _attachments: { 'a.txt': { stub: true } } } });
    assert.equal(edited.status, 201, JSON.stringify(edited.body));
  });

  test('a map function sees stubs without encoding fields', async () => {
    const map = "function (doc) { for (var name in doc._attachments) emit(name, 'encoding' in doc._attachments[name]); }";
    assert.equal((await server().admin('/jsgz/_design/m', { method: 'PUT', body: { views: { atts: { map } } } })).status, 201);
    const rows = await server().admin('/jsgz/_design/m/_view/atts');
    assert.equal(rows.status, 200);
    assert.deepEqual(rows.body.rows.map((row: { key: string; value: boolean }) => [row.key, row.value]), [['a.txt', false]]);
  });
}, '[attachments]\ncompression_level = 8\n');
