/**
 * A document with its attachments as `multipart/related` (CouchDB's answer to `GET /{db}/{doc}` with
 * `Accept: multipart/related` and `attachments=true`): the JSON first, then each `follows: true`
 * attachment as its own part, streamed a chunk at a time.
 */
import { randomHex } from '../crypto/crypto.js';
import type { JsonObject } from '../json/json.js';
import type { FollowingPart } from '../attachments/outgoing.js';
import type { Reply } from './reply.js';

/** Whether the client asked for `multipart/related` (CouchDB answers it only with attachments to send). */
export function acceptsRelated(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((type) => type.split(';', 1)[0]!.trim().toLowerCase() === 'multipart/related');
}

export function relatedReply(doc: JsonObject, parts: readonly FollowingPart[], data: (part: FollowingPart) => Promise<AsyncIterable<Buffer>>, headers: Record<string, string>): Reply {
  const boundary = randomHex(16);
  return {
    status: 200,
    headers: { ...headers, 'Content-Type': `multipart/related; boundary="${boundary}"` },
    stream: async (out) => {
      await out.write(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}`);
      for (const part of parts) {
        const name = part.name.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));
        await out.write(`\r\n--${boundary}\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Type: ${part.contentType}\r\nContent-Length: ${part.length}\r\n\r\n`);
        for await (const chunk of await data(part)) {
          if (out.signal.aborted) return;
          await out.write(chunk);
        }
      }
      await out.write(`\r\n--${boundary}--`);
    },
  };
}
