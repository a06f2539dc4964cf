import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/config.js';
import { maxDocumentSize } from '../databases/settings.js';
import { incompleteRequestBody, requestEntityTooLarge } from '../errors/catalog.js';
import { parseJsonBytes, type Request } from './request.js';

/** Bodies of bulk requests are refused above this many bytes unless `max_document_size` is larger. */
const BULK_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The largest body of a bulk request (`_bulk_docs`, `_bulk_get`, `_revs_diff`, POST `_changes` and
 * `_all_docs`): 64 MiB, or `[couchdb] max_document_size` when that is larger, never more than
 * `[chttpd] max_http_request_size`. A bigger batch gets 413 while it is read, so a replicator's
 * oversized batch costs at most this much memory.
 */
function bulkBodyLimit(config: Config): number {
  const maxRequest = config.getInteger('chttpd', 'max_http_request_size');
  return Math.min(maxRequest, Math.max(BULK_BODY_BYTES, maxDocumentSize(config)));
}

/** How long the rest of an oversized body is read and dropped so that the client gets its 413. */
const DRAIN_MS = 30_000;

/**
 * Reads a body of at most `limit` bytes without ever destroying the request: past the limit the
 * rest is read and dropped (up to `DRAIN_MS`), so that a client still uploading its batch can read
 * the 413 instead of seeing its connection reset. Resolves `undefined` for a body that was too large.
 */
function readLimited(raw: IncomingMessage, limit: number, drainBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = limit < 0;
    let timer: NodeJS.Timeout | undefined;
    const cleanup = (): void => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
      raw.off('close', onClose);
    };
    const tooLarge = (): void => {
      over = true;
      chunks.length = 0;
      timer ??= setTimeout(() => {
        cleanup();
        resolve(undefined);
      }, DRAIN_MS);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (!over && size > limit) tooLarge();
      if (over) {
        // Past what max_http_request_size allows, stop listening: the connection is then closed.
        if (size > drainBytes) {
          cleanup();
          resolve(undefined);
        }
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(over ? undefined : Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      cleanup();
      reject(incompleteRequestBody());
    };
    const onClose = (): void => {
      if (raw.complete) return;
      cleanup();
      reject(incompleteRequestBody());
    };
    if (over) tooLarge();
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('error', onError);
    raw.on('close', onClose);
    raw.resume();
  });
}

/** Reads a bulk request's JSON body under `bulkBodyLimit`; an oversized one is a 413 `too_large`. */
export async function readBulkJson(request: Request, config: Config): Promise<unknown> {
  return parseJsonBytes(await readBulkBytes(request, config));
}

/** The raw body of a bulk request, read under `bulkBodyLimit` (see `readLimited`). */
export async function readBulkBytes(request: Request, config: Config): Promise<Buffer> {
  const limit = bulkBodyLimit(config);
  const encoding = (request.header('content-encoding') ?? 'identity').trim().toLowerCase();
  // Compressed bodies take the general reader (it inflates under the same limit), as does a body a rewrite gave.
  if (encoding !== 'identity' || request.hasPresetBody) return request.body(limit, requestEntityTooLarge);
  const maxRequest = config.getInteger('chttpd', 'max_http_request_size');
  const declared = Number(request.header('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxRequest) throw requestEntityTooLarge();
  const tooLongAlready = Number.isFinite(declared) && declared > limit;
  const bytes = await readLimited(request.raw, tooLongAlready ? -1 : limit, maxRequest);
  if (bytes === undefined) throw requestEntityTooLarge();
  return bytes;
}

