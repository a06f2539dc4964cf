import { deleteAttachment, openAttachment, putAttachment, type OpenedAttachment } from '../../databases/attachment-ops.js';
import { acceptsGzip, decoded } from '../../attachments/encoding.js';
import { isHeaderSafe } from '../../attachments/incoming.js';
import { validateDocumentId } from '../../documents/document-json.js';
import { rangeNotSatisfiable } from '../../errors/attachment-errors.js';
import { badContentType, methodNotAllowed, notFound } from '../../errors/catalog.js';
import { attachmentSafetyHeaders } from '../attachment-policy.js';
import { attachmentPathOf, databaseName } from '../document-path.js';
import { revisionFrom } from '../query.js';
import { matchesIfNoneMatch } from '../static.js';
import { json, type Reply } from '../reply.js';
import type { Request } from '../request.js';
import type { Services } from '../services.js';
import { absoluteUrl, documentPath } from '../urls.js';

/** One `bytes=` range of `length` bytes: undefined for none (or several: the whole body is answered). */
function parseRange(header: string | undefined, length: number): { start: number; end: number } | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, from, to] = match;
  // As CouchDB's parse_ranges: `bytes=0-` covers the whole attachment, answered 200.
  if ((from === '' && to === '') || (to === '' && Number(from) === 0)) return undefined;
  let start: number;
  let end: number;
  if (from === '') {
    start = Math.max(0, length - Number(to));
    end = length - 1;
  } else {
    start = Number(from);
    end = to === '' ? length - 1 : Math.min(Number(to), length - 1);
  }
  if (start > end || start >= length) throw rangeNotSatisfiable();
  return { start, end };
}

/** As CouchDB: a body sent `Content-Encoding: gzip` is stored as sent, encoded; no other coding is taken. */
function uploadEncoding(header: string | undefined): 'gzip' | undefined {
  const coding = (header ?? 'identity').trim().toLowerCase();
  if (coding === 'identity') return undefined;
  if (coding === 'gzip') return 'gzip';
  throw badContentType('Only gzip and identity content-encodings are supported');
}

function readReply(request: Request, attachment: OpenedAttachment, safety: Record<string, string>): Reply {
  const { stub } = attachment;
  const etag = `"${stub.digest.replace(/^md5-/, '')}"`;
  const gzip = stub.encoding === 'gzip';
  // nosniff: a browser renders the attachment only as the type it was stored with.
  // A type stored before content types were checked may not be sendable; it goes out as bytes.
  const contentType = isHeaderSafe(stub.content_type) ? stub.content_type : 'application/octet-stream';
  const headers: Record<string, string> = { 'Content-Type': contentType, ETag: etag, 'Accept-Ranges': gzip ? 'none' : 'bytes', ...safety };
  // A list of ETags, or the weak form, matches as on the document path.
  if (matchesIfNoneMatch(request.header('if-none-match'), etag)) return { status: 304, headers };
  // As CouchDB: a gzip-stored attachment is sent whole (Range ignored), encoded when the client takes gzip.
  const encoded = gzip && acceptsGzip(request.header('accept-encoding'));
  if (encoded) headers['Content-Encoding'] = 'gzip';
  const range = request.method === 'GET' && !gzip ? parseRange(request.header('range'), stub.length) : undefined;
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${stub.length}`;
  // A gzip upload stored as sent names no decoded length (both lengths are the encoded one): decoded, it goes chunked, as CouchDB's.
  const unknownLength = gzip && !encoded && stub.length === stub.encoded_length;
  if (!unknownLength) headers['Content-Length'] = String(range ? range.end - range.start + 1 : encoded ? (stub.encoded_length ?? stub.length) : stub.length);
  return {
    status: range ? 206 : 200,
    headers,
    stream: async (out) => {
      const data = await attachment.read(range);
      for await (const chunk of gzip && !encoded ? decoded(data, 'gzip') : data) {
        if (out.signal.aborted) return;
        await out.write(chunk);
      }
    },
  };
}

/** `/{db}/{doc}/{name}` and `/{db}/_design/{ddoc}/{name}`: one attachment. */
export async function attachment(request: Request, services: Services): Promise<Reply> {
  const db = databaseName(request);
  const path = attachmentPathOf(request.segments);
  if (path === undefined) throw notFound('missing');
  const id = validateDocumentId(path.id);
  const opened = await services.databases.openForDocument(db, request.userCtx, id);
  const rev = revisionFrom(request);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const found = await openAttachment(opened, id, path.name, rev);
      return readReply(request, found, attachmentSafetyHeaders(services.config, found.stub.content_type, id, path.name));
    }
    case 'PUT': {
      const contentType = request.header('content-type') ?? 'application/octet-stream';
      const encoding = uploadEncoding(request.header('content-encoding'));
      const result = await putAttachment(opened, { id, name: path.name, rev, ...(encoding ? { encoding } : {}) }, contentType, request.stream());
      return written(request, db, result, path.name, 201);
    }
    case 'DELETE':
      return written(request, db, await deleteAttachment(opened, id, path.name, rev), path.name, 200);
    default:
      throw methodNotAllowed(['DELETE', 'GET', 'HEAD', 'PUT']);
  }
}

function written(request: Request, db: string, result: { id: string; rev: string }, name: string, status: number): Reply {
  const location = `${documentPath(db, result.id)}/${name.split('/').map(encodeURIComponent).join('/')}`;
  return json(status, { ok: true, ...result }, { ETag: `"${result.rev}"`, Location: absoluteUrl(request, location) });
}
