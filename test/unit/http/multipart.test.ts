import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundaryOf, MultipartReader } from '../../../src/multipart/reader.js';

async function* split(bytes: Buffer, sizes: number[]): AsyncIterable<Buffer> {
  let at = 0;
  let i = 0;
  while (at < bytes.length) {
    const size = sizes[i++ % sizes.length]!;
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

async function readAll(reader: MultipartReader): Promise<{ headers: Record<string, string>; body: string }[]> {
  const parts: { headers: Record<string, string>; body: string }[] = [];
  for (let part = await reader.nextPart(); part !== undefined; part = await reader.nextPart()) {
    const chunks: Buffer[] = [];
    for await (const chunk of part.body) chunks.push(chunk);
    parts.push({ headers: part.headers, body: Buffer.concat(chunks).toString('latin1') });
  }
  return parts;
}

const CASES: { name: string; body: string; parts: { headers: Record<string, string>; body: string }[] }[] = [
  {
    name: 'a JSON part and an attachment part, as the replicator sends them',
    body: '--abc\r\nContent-Type: application/json\r\n\r\n{"_id":"x"}\r\n--abc\r\nContent-Disposition: attachment; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--abc--',
    parts: [
      { headers: { 'content-type': 'application/json' }, body: '{"_id":"x"}' },
      { headers: { 'content-disposition': 'attachment; filename="a.txt"', 'content-type': 'text/plain' }, body: 'hello' },
    ],
  },
  {
    name: 'a preamble, a part without headers, a body holding CRLF and dashes, an epilogue',
    body: 'ignored preamble\r\n--abc\r\n\r\nline\r\n--ab\r\n-- not a boundary\r\n--abc--\r\nepilogue',
    parts: [{ headers: {}, body: 'line\r\n--ab\r\n-- not a boundary' }],
  },
  {
    name: 'an empty part body and transport padding after the boundary',
    body: '--abc  \r\nX-A: 1\r\n\r\n\r\n--abc\r\nX-B: 2\r\n\r\nz\r\n--abc--\r\n',
    parts: [
      { headers: { 'x-a': '1' }, body: '' },
      { headers: { 'x-b': '2' }, body: 'z' },
    ],
  },
];

for (const { name, body, parts } of CASES) {
  test(`multipart/related: ${name}, split at every chunk size`, async () => {
    for (const sizes of [[body.length], [1], [2], [3, 7], [5], [13, 1]]) {
      assert.deepEqual(await readAll(new MultipartReader(split(Buffer.from(body, 'latin1'), sizes), 'abc')), parts, `chunks of ${sizes.join(',')}`);
    }
  });
}

test('multipart/related: a body cut before its closing delimiter is refused', async () => {
  const reader = new MultipartReader(split(Buffer.from('--abc\r\n\r\nunfinished'), [4]), 'abc');
  const part = await reader.nextPart();
  await assert.rejects(async () => {
    for await (const chunk of part!.body) void chunk;
  }, /Malformed multipart body/);
});

test('boundaryOf reads quoted and bare boundaries', () => {
  assert.equal(boundaryOf('multipart/related; boundary="a b"'), 'a b');
  assert.equal(boundaryOf('multipart/related;boundary=xyz; type=foo'), 'xyz');
  assert.equal(boundaryOf('multipart/related'), undefined);
});
