/**
 * Documents with their attachments as multipart answers, in CouchDB's layout: `multipart/related`
 * (`GET /{db}/{doc}` with `Accept: multipart/related` and `attachments=true`): the JSON first, then
 * each `follows: true` attachment as its own part, streamed a chunk at a time; and `multipart/mixed`
 * (`open_revs` with `Accept: multipart/mixed`, as CouchDB's replicator asks): one part per
 * revision, a revision with attachments to send being itself a `multipart/related` part.
 */
import { randomHex } from '../crypto/crypto.js';
import type { JsonObject } from '../json/json.js';
import type { FollowingPart } from '../attachments/outgoing.js';
import type { Reply, ReplyStream } from './reply.js';

/** Whether the client asked for `multipart/related` (CouchDB answers it only with attachments to send). */
export function acceptsRelated(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((type) => type.split(';', 1)[0]!.trim().toLowerCase() === 'multipart/related');
}

type PartData = (part: FollowingPart) => Promise<AsyncIterable<Buffer>>;

/** Writes the parts of one `multipart/related` body (the JSON, then each attachment); false when the client left. */
async function writeRelated(out: ReplyStream, boundary: string, doc: JsonObject, parts: readonly FollowingPart[], data: PartData): Promise<boolean> {
  await out.write(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}`);
  for (const part of parts) {
    const name = part.name.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));
    await out.write(`\r\n--${boundary}\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Type: ${part.contentType}\r\nContent-Length: ${part.length}${part.encoding === undefined ? '' : `\r\nContent-Encoding: ${part.encoding}`}\r\n\r\n`);
    for await (const chunk of await data(part)) {
      if (out.signal.aborted) return false;
      await out.write(chunk);
    }
  }
  await out.write(`\r\n--${boundary}--`);
  return true;
}

export function relatedReply(doc: JsonObject, parts: readonly FollowingPart[], data: PartData, headers: Record<string, string>): Reply {
  const boundary = randomHex(16);
  return {
    status: 200,
    headers: { ...headers, 'Content-Type': `multipart/related; boundary="${boundary}"` },
    stream: async (out) => void (await writeRelated(out, boundary, doc, parts, data)),
  };
}

/** One revision of a `multipart/mixed` answer: a JSON part (a document, or `{"missing": rev}`), or a document with its parts. */
export type MixedItem = { json: JsonObject; error?: boolean } | { doc: JsonObject; parts: readonly FollowingPart[] };

export function mixedReply(items: readonly MixedItem[], data: PartData): Reply {
  const boundary = randomHex(16);
  return {
    status: 200,
    headers: { 'Content-Type': `multipart/mixed; boundary="${boundary}"` },
    stream: async (out) => {
      await out.write(`--${boundary}`);
      for (const item of items) {
        if ('json' in item) {
          await out.write(`\r\nContent-Type: application/json${item.error ? '; error="true"' : ''}\r\n\r\n${JSON.stringify(item.json)}\r\n--${boundary}`);
          continue;
        }
        const inner = randomHex(16);
        await out.write(`\r\nContent-Type: multipart/related; boundary="${inner}"\r\n\r\n`);
        if (!(await writeRelated(out, inner, item.doc, item.parts, data))) return;
        await out.write(`\r\n--${boundary}`);
      }
      await out.write('--');
    },
  };
}
