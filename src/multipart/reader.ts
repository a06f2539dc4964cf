/**
 * A streaming reader of `multipart/related` and `multipart/mixed` bodies (RFC 2046), as CouchDB's
 * replicator sends a document with its attachments and as `open_revs` answers it: parts are read
 * one after the other, each body as a stream, and never more than one network chunk plus a
 * delimiter is held. A part's body may itself be read as a multipart (the `multipart/related`
 * parts of a `multipart/mixed` answer). busboy reads only `multipart/form-data`, hence this small
 * reader; it is shared by the HTTP layer and the replicator.
 */
import { badRequest } from '../errors/catalog.js';

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;

interface Part {
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: AsyncIterable<Buffer>;
}

/** The `boundary` parameter of a multipart Content-Type; undefined when there is none. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary !== undefined && boundary.length <= 200 ? boundary : undefined;
}

const malformed = (): Error => badRequest('Malformed multipart body.');

export class MultipartReader {
  readonly #source: AsyncIterator<Buffer>;
  readonly #delimiter: Buffer;
  // The body is read as if preceded by CRLF, so the first boundary is a delimiter like the others.
  #buffer: Buffer = Buffer.from(CRLF);
  #ended = false;
  #state: 'start' | 'body' | 'delimited' | 'end' = 'start';
  #current: AsyncIterable<Buffer> | undefined;

  constructor(source: AsyncIterable<Buffer>, boundary: string) {
    this.#source = source[Symbol.asyncIterator]();
    this.#delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** The next part, undefined after the closing delimiter; an unread previous body is skipped. */
  async nextPart(): Promise<Part | undefined> {
    if (this.#state === 'start' || this.#state === 'body') for await (const skipped of this.#body()) void skipped;
    if (this.#state === 'end') return undefined;
    while (this.#buffer.length < 2) if (!(await this.#fill())) throw malformed();
    if (this.#buffer[0] === 0x2d && this.#buffer[1] === 0x2d) {
      this.#state = 'end';
      return undefined;
    }
    // The rest of the boundary line (transport padding), then the headers.
    await this.#readThrough(CRLF);
    while (this.#buffer.length < 2) if (!(await this.#fill())) throw malformed();
    let headers = '';
    if (this.#buffer.subarray(0, 2).equals(CRLF)) this.#buffer = this.#buffer.subarray(2);
    else headers = await this.#readThrough(HEADERS_END);
    this.#state = 'body';
    this.#current = this.#body();
    return { headers: parseHeaders(headers), body: this.#current };
  }

  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const next = await this.#source.next();
    if (next.done) {
      this.#ended = true;
      return false;
    }
    this.#buffer = this.#buffer.length === 0 ? next.value : Buffer.concat([this.#buffer, next.value]);
    return true;
  }

  /** Yields bytes up to the next delimiter, which it consumes. */
  async *#body(): AsyncGenerator<Buffer> {
    for (;;) {
      const at = this.#buffer.indexOf(this.#delimiter);
      if (at !== -1) {
        const last = this.#buffer.subarray(0, at);
        this.#buffer = this.#buffer.subarray(at + this.#delimiter.length);
        this.#state = 'delimited';
        if (last.length > 0) yield last;
        return;
      }
      // Keep what could be the start of a delimiter split across two chunks.
      const keep = Math.min(this.#buffer.length, this.#delimiter.length - 1);
      const out = this.#buffer.subarray(0, this.#buffer.length - keep);
      this.#buffer = this.#buffer.subarray(this.#buffer.length - keep);
      if (out.length > 0) yield out;
      if (!(await this.#fill())) throw malformed();
    }
  }

  async #readThrough(marker: Buffer): Promise<string> {
    for (;;) {
      const at = this.#buffer.indexOf(marker);
      if (at !== -1) {
        const text = this.#buffer.subarray(0, at).toString('latin1');
        this.#buffer = this.#buffer.subarray(at + marker.length);
        return text;
      }
      if (this.#buffer.length > MAX_HEADER_BYTES || !(await this.#fill())) throw malformed();
    }
  }
}

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed();
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}
