/**
 * A remote's answer read with a bound (issue 32 item 5): `[replicator] max_response_size` bytes at
 * most for anything the replicator holds whole (a `_changes` page, a `_bulk_get` answer, a JSON
 * part of `open_revs`, an error body). Past the bound the stream is destroyed at once, so a huge or
 * endless answer costs the bound, not its size, and the job fails with `response_too_large`. That
 * failure is permanent: the same request would get the same answer.
 */
import { ReplicationSpecError } from './replication-errors.js';

const TOO_LARGE = 'response_too_large';

export function tooLarge(what: string, limit: number): ReplicationSpecError {
  return new ReplicationSpecError(502, TOO_LARGE, `${what} is over ${limit} bytes ([replicator] max_response_size)`);
}

export const isTooLarge = (error: unknown): boolean => error instanceof ReplicationSpecError && error.error === TOO_LARGE;

/**
 * The bytes of `body`, or only their count when `keep` is false (an epilogue read to free the
 * socket); leaving the loop early destroys the stream.
 */
export async function readBounded(body: AsyncIterable<Buffer>, limit: number, what: string, keep = true): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(what, limit);
    if (keep) chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
