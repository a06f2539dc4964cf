/**
 * gzip storage of compressible attachments, as CouchDB's `[attachments] compressible_types` and
 * `compression_level`: a matching attachment is streamed through zlib while it is saved, its stub
 * keeps `encoding: "gzip"` and `encoded_length` (the stored size; `length` stays the size sent, and
 * `digest` is the MD5 of the stored bytes, as in CouchDB). Reads decode on the fly unless the client
 * takes gzip itself.
 */
import { createHash } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { isObject } from '../documents/document-json.js';
import type { JsonObject } from '../json/json.js';

export interface CompressionSettings {
  /** `compressible_types`, one pattern each (`*` matches any run of characters, as CouchDB's). */
  types: RegExp[];
  /** zlib level 0-9; 0 stores every attachment as sent. */
  level: number;
}

/** Parses `compressible_types` and `compression_level`. */
export function compressionSettings(types: string, level: number): CompressionSettings {
  const list = types.split(',').map((type) => type.trim()).filter((type) => type !== '');
  const pattern = (type: string): RegExp => new RegExp(`^${type.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 'i');
  return { types: list.map(pattern), level: Number.isInteger(level) ? Math.min(9, Math.max(0, level)) : 0 };
}

/** Whether an attachment of `contentType` is stored gzip-compressed. */
export function isCompressible(settings: CompressionSettings, contentType: string): boolean {
  if (settings.level === 0) return false;
  // Parameters (`; charset=…`) do not count, as in CouchDB's match.
  const type = contentType.split(';', 1)[0]!.trim();
  return settings.types.some((pattern) => pattern.test(type));
}

/**
 * `source` gzip-compressed, streamed; `identityLength()` and `identityDigest()` are of the bytes read
 * (the digest once the source is read to its end), so a digest the sender names can be checked as
 * CouchDB checks it (against the data before compression).
 */
export function gzipped(
  source: AsyncIterable<Buffer>,
  level: number,
  maxBytes: number,
  tooLarge: () => Error,
): { data: AsyncIterable<Buffer>; identityLength: () => number; identityDigest: () => string } {
  let length = 0;
  const md5 = createHash('md5');
  let digest = '';
  async function* counted(): AsyncIterable<Buffer> {
    for await (const piece of source) {
      length += piece.length;
      if (length > maxBytes) throw tooLarge();
      md5.update(piece);
      yield piece;
    }
    digest = `md5-${md5.digest('base64')}`;
  }
  const data = pipeline(Readable.from(counted()), createGzip({ level }), () => undefined);
  return { data, identityLength: () => length, identityDigest: () => digest };
}

/** Stored bytes as the client reads them: gunzipped when stored with `encoding: "gzip"`. */
export function decoded(data: AsyncIterable<Buffer>, encoding: unknown): AsyncIterable<Buffer> {
  if (encoding !== 'gzip') return data;
  return pipeline(Readable.from(data), createGunzip(), () => undefined);
}

/** Whether an `Accept-Encoding` header takes gzip (a `q=0` refuses it). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((entry) => {
    const [coding, ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') return false;
    const q = params.find((param) => param.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The document without `encoding`/`encoded_length` in its stubs (CouchDB shows them only with `att_encoding_info=true`). */
export function withoutEncodingInfo(doc: JsonObject): JsonObject {
  const atts = doc['_attachments'];
  if (!isObject(atts) || !Object.values(atts).some((stub) => isObject(stub) && 'encoding' in stub)) return doc;
  const stripped: JsonObject = {};
  for (const [name, stub] of Object.entries(atts)) {
    if (!isObject(stub) || !('encoding' in stub)) {
      stripped[name] = stub;
      continue;
    }
    stripped[name] = Object.fromEntries(Object.entries(stub).filter(([key]) => key !== 'encoding' && key !== 'encoded_length')) as JsonObject;
  }
  return { ...doc, _attachments: stripped };
}
