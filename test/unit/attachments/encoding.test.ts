import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, compressionSettings, decoded, gzipped, isCompressible, withoutEncodingInfo } from '../../../src/attachments/encoding.js';

const DEFAULT_TYPES = 'text/*, application/javascript, application/json, application/xml';

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

async function* pieces(bytes: Buffer, size: number): AsyncIterable<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

test('compressible types match as CouchDB: * anywhere, case-insensitive, parameters ignored, exact otherwise', () => {
  const settings = compressionSettings(DEFAULT_TYPES, 8);
  for (const type of ['text/plain', 'TEXT/HTML', 'text/plain; charset=utf-8', 'application/json', 'application/xml ']) assert.ok(isCompressible(settings, type), type);
  for (const type of ['image/png', 'application/jsonx', 'application/octet-stream', 'xtext/plain']) assert.ok(!isCompressible(settings, type), type);
  const custom = compressionSettings('*/xml, application/*+json', 5);
  assert.ok(!isCompressible(custom, 'image/svg+xml'), 'the / is literal');
  assert.ok(!isCompressible(custom, 'application/json'));
  assert.ok(isCompressible(custom, 'text/xml'));
  assert.ok(isCompressible(custom, 'application/ld+json'));
  assert.ok(!isCompressible(compressionSettings(DEFAULT_TYPES, 0), 'text/plain'), 'level 0 compresses nothing');
});

test('gzipped streams and counts the identity bytes; decoded gives them back; the size limit is on the identity bytes', async () => {
  const bytes = Buffer.concat([Buffer.from('abc'.repeat(100_000)), randomBytes(1000)]);
  const gzip = gzipped(pieces(bytes, 7000), 8, bytes.length, () => new Error('too large'));
  const stored = await collect(gzip.data);
  assert.equal(gzip.identityLength(), bytes.length);
  assert.ok(stored.length < bytes.length / 10);
  assert.ok(gunzipSync(stored).equals(bytes));
  async function* again(): AsyncIterable<Buffer> {
    yield stored;
  }
  assert.ok((await collect(decoded(again(), 'gzip'))).equals(bytes));
  const tooLarge = gzipped(pieces(bytes, 7000), 8, bytes.length - 1, () => new Error('too large'));
  await assert.rejects(collect(tooLarge.data), /too large/);
});

test('Accept-Encoding: gzip (or *) unless q=0', () => {
  assert.ok(acceptsGzip('gzip, deflate, br'));
  assert.ok(acceptsGzip('deflate;q=1, GZIP;q=0.5'));
  assert.ok(acceptsGzip('*'));
  assert.ok(!acceptsGzip(undefined));
  assert.ok(!acceptsGzip('identity'));
  assert.ok(!acceptsGzip('gzip;q=0, identity'));
});

test('withoutEncodingInfo drops encoding and encoded_length from stubs only', () => {
  const doc = { _id: 'a', encoding: 'x', _attachments: { t: { content_type: 'text/plain', length: 9, stub: true, encoding: 'gzip', encoded_length: 3 }, p: { content_type: 'image/png', length: 1, stub: true } } };
  assert.deepEqual(withoutEncodingInfo(doc), { _id: 'a', encoding: 'x', _attachments: { t: { content_type: 'text/plain', length: 9, stub: true }, p: { content_type: 'image/png', length: 1, stub: true } } });
  const plain = { _id: 'b' };
  assert.equal(withoutEncodingInfo(plain), plain);
});
