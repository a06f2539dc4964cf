/**
 * Revisions with attachments copied as CouchDB's replicator copies them (couch_replicator_api_wrap
 * `open_doc_revs` and `update_doc`): read with `open_revs`, `atts_since` and `Accept:
 * multipart/mixed`, each revision with attachments to send arriving as a `multipart/related`
 * part that is written to the target as a `PUT ?new_edits=false` `multipart/related` body while
 * it is read: the JSON part, then each attachment's bytes, streamed from the source's answer into
 * the target's request. A job thus holds one document's JSON and a few network chunks, never an
 * attachment whole. Revisions without attachments to send, and every revision of a source that
 * answers `open_revs` in JSON (older servers, PouchDB Server: attachments inline in base64), are
 * handed back to go through `_bulk_docs` with the rest of the batch.
 */
import { randomBytes } from 'node:crypto';
import type { JsonObject } from '../json/json.js';
import { boundaryOf, MultipartReader } from '../multipart/reader.js';
import { readBounded } from './bounded-read.js';
import { errorOf, type RemoteClient, type Upload } from './http-client.js';
import { RemoteError, ReplicationSpecError } from './replication-errors.js';

/** What one document's copy did: revisions left for `_bulk_docs`, revisions written, refusals. */
interface DocumentCopy {
  docs: JsonObject[];
  read: number;
  written: number;
  refused: JsonObject[];
}

const asObject = (value: unknown): JsonObject => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {});

const badResponse = (what: string): RemoteError => new RemoteError(502, 'bad_response', `the source answered open_revs with ${what}`);

/** A part (or answer) held whole: at most `[replicator] max_response_size` bytes. */
const wholePart = (client: RemoteClient, body: AsyncIterable<Buffer>, id: string): Promise<Buffer> =>
  readBounded(body, client.maxResponseBytes, `a JSON part of the source's open_revs answer for ${JSON.stringify(id)}`);

/** Reads the revisions `revs` of document `id` from `source` and writes them to `target`. */
export async function copyDocument(source: RemoteClient, target: RemoteClient, id: string, revs: string[], attsSince: string[] | undefined): Promise<DocumentCopy> {
  const query: Record<string, string> = { revs: 'true', open_revs: JSON.stringify(revs), latest: 'true', attachments: 'true' };
  if (attsSince && attsSince.length > 0) query['atts_since'] = JSON.stringify(attsSince);
  const response = await source.stream('GET', encodeURIComponent(id), { query, headers: { Accept: 'multipart/mixed' } });
  const copy: DocumentCopy = { docs: [], read: 0, written: 0, refused: [] };
  try {
    if (response.status >= 400) throw errorOf({ ...response, body: await wholePart(source, response.body, id) });
    const type = String(response.headers['content-type'] ?? '');
    const boundary = boundaryOf(type);
    if (!type.toLowerCase().startsWith('multipart/') || boundary === undefined) {
      // A server that answers open_revs only in JSON: the attachments are inline, `_bulk_docs` takes them.
      const answer: unknown = JSON.parse((await wholePart(source, response.body, id)).toString('utf8'));
      for (const item of Array.isArray(answer) ? answer : []) if (asObject(item)['ok']) copy.docs.push(asObject(asObject(item)['ok']));
      copy.read = copy.docs.length;
      return copy;
    }
    const outer = new MultipartReader(response.body, boundary);
    for (let part = await outer.nextPart(); part !== undefined; part = await outer.nextPart()) {
      const inner = boundaryOf(part.headers['content-type'] ?? '');
      if (!(part.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/related') || inner === undefined) {
        const doc = asObject(JSON.parse((await wholePart(source, part.body, id)).toString('utf8')));
        if (doc['_id'] !== undefined && doc['missing'] === undefined) copy.docs.push(doc), copy.read++;
        continue;
      }
      copy.read++;
      const refusal = await putRelated(target, id, new MultipartReader(part.body, inner));
      if (refusal === undefined) copy.written++;
      else copy.refused.push(refusal);
    }
    // The epilogue, so the connection goes back to the pool (counted, not kept: an endless one fails).
    await readBounded(response.body, source.maxResponseBytes, `the epilogue of the source's open_revs answer for ${JSON.stringify(id)}`, false);
    return copy;
  } catch (error) {
    if (error instanceof RemoteError || error instanceof ReplicationSpecError) throw error;
    throw new RemoteError(0, 'network_error', `reading ${id} from the source: ${(error as Error).message}`);
  } finally {
    response.body.destroy();
  }
}

interface Following {
  name: string;
  contentType: string;
  length: number | undefined;
}

/** The `follows: true` attachments of a document's JSON, in the order their parts come. */
function followingOf(doc: JsonObject): Following[] {
  return Object.entries(asObject(doc['_attachments'])).flatMap(([name, value]) => {
    const att = asObject(value);
    if (att['follows'] !== true) return [];
    const length = att['encoding'] !== undefined ? att['encoded_length'] : att['length'];
    return [{ name, contentType: typeof att['content_type'] === 'string' ? att['content_type'] : 'application/octet-stream', length: typeof length === 'number' ? length : undefined }];
  });
}

function partHead(boundary: string, att: Following): string {
  const name = att.name.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));
  return `\r\n--${boundary}\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Type: ${att.contentType}${att.length === undefined ? '' : `\r\nContent-Length: ${att.length}`}\r\n\r\n`;
}

/** Writes a chunk, waiting while the target's socket is full (or until the target has answered). */
function write(upload: Upload, chunk: Buffer | string): Promise<void> {
  if (upload.answered || upload.request.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => (upload.request.off('drain', done), upload.request.off('close', done), resolve());
    upload.request.once('drain', done);
    upload.request.once('close', done);
    void upload.answer.then(done, done);
  });
}

/**
 * `PUT /{db}/{id}?new_edits=false` with the source's `multipart/related` revision streamed through.
 * The JSON part goes as the source sent it (the order of its attachments is the order of the parts).
 * Answers the refusal row of a document the target refuses (`forbidden`, `unauthorized`, as
 * CouchDB's replicator counts them); other errors throw.
 */
async function putRelated(target: RemoteClient, id: string, reader: MultipartReader): Promise<JsonObject | undefined> {
  const first = await reader.nextPart();
  if (first === undefined) throw badResponse('an empty multipart/related part');
  const json = await wholePart(target, first.body, id);
  const doc = asObject(JSON.parse(json.toString('utf8')));
  const atts = followingOf(doc);
  const boundary = randomBytes(16).toString('hex');
  const head = `--${boundary}\r\nContent-Type: application/json\r\n\r\n`;
  const tail = `\r\n--${boundary}--`;
  const known = atts.every((att) => att.length !== undefined);
  const length = Buffer.byteLength(head) + json.length + atts.reduce((sum, att) => sum + Buffer.byteLength(partHead(boundary, att)) + (att.length ?? 0), 0) + Buffer.byteLength(tail);
  const headers: Record<string, string> = { 'Content-Type': `multipart/related; boundary="${boundary}"`, ...(known ? { 'Content-Length': String(length) } : {}) };
  const upload = await target.upload('PUT', encodeURIComponent(id), { query: { new_edits: 'false' }, headers });
  await write(upload, head);
  await write(upload, json);
  for (const att of atts) {
    const part = await reader.nextPart();
    if (part === undefined) throw (upload.request.destroy(), badResponse(`fewer parts than attachments in ${id}`));
    await write(upload, partHead(boundary, att));
    let sent = 0;
    for await (const chunk of part.body) {
      sent += chunk.length;
      // More bytes than the JSON announced: stop at once rather than stream an endless part.
      if (att.length !== undefined && sent > att.length) throw (upload.request.destroy(), badResponse(`more than ${att.length} bytes in ${id}/${att.name}`));
      await write(upload, chunk);
    }
    if (att.length !== undefined && sent !== att.length) throw (upload.request.destroy(), badResponse(`${sent} bytes for ${att.length} in ${id}/${att.name}`));
  }
  if (!upload.answered) upload.request.end(tail);
  const answer = await upload.answer;
  if (answer.status < 400) return undefined;
  const error = errorOf(answer);
  // A refusal may come before the whole body was sent: that socket is not reused.
  if (!upload.request.writableFinished) upload.request.destroy();
  if (['forbidden', 'unauthorized'].includes(error.error) || answer.status === 413 || answer.status === 415) return { id, error: error.error, reason: error.reason };
  throw error;
}
