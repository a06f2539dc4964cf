import { CouchError } from '../errors/couch-error.js';
import type { Json, JsonObject } from '../json/json.js';
import { isObject } from './function-types/function-type.js';

/** An answer a show or update function rendered, ready for HTTP. */
export interface RenderedResponse {
  status: number;
  headers: Record<string, string>;
  /** Raw bytes (`body`, `base64`), or a JSON value (`json`). */
  body: { bytes: Buffer } | { json: Json };
}

const externalResponseError = (key: string, value: Json): CouchError =>
  new CouchError(500, 'external_response_error', `Invalid data from external server: {<<"${key}">>,${JSON.stringify(value)}}`);

const headerText = (value: Json): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A show or update function's response object read as CouchDB reads it
 * (chttpd_external:parse_external_response): members in order, a later one overriding an earlier,
 * `code`, `json` (sent as JSON), `body` (text/html), `base64` (application/binary), `headers`
 * (their `Content-Type` wins); any other member is a 500 `external_response_error`. A string is `{body}`.
 */
export function renderedResponse(response: Json, status = 200): RenderedResponse {
  const members: JsonObject = typeof response === 'string' ? { body: response } : isObject(response) ? response : {};
  let contentType = 'application/json';
  let headers: Record<string, string> = {};
  let body: RenderedResponse['body'] = { bytes: Buffer.alloc(0) };
  let json: Json | undefined;
  for (const [key, value] of Object.entries(members)) {
    if (key === 'code' && typeof value === 'number' && Number.isInteger(value)) status = value;
    else if (key === 'json') [json, contentType] = [value, 'application/json'];
    else if (key === 'body' && typeof value === 'string') [body, contentType] = [{ bytes: Buffer.from(value, 'utf8') }, 'text/html; charset=utf-8'];
    else if (key === 'base64' && typeof value === 'string') [body, contentType] = [{ bytes: Buffer.from(value, 'base64') }, 'application/binary'];
    else if (key === 'headers' && isObject(value)) headers = Object.fromEntries(Object.entries(value).map(([name, text]) => [name, headerText(text)]));
    else if (key !== 'stop') throw externalResponseError(key, value);
  }
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers = { 'Content-Type': contentType, ...headers };
  return { status, headers, body: json === undefined || json === null ? body : { json } };
}
