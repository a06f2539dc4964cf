// Requests of the admin console: same origin, the session cookie, JSON in and out.

/**
 * @typedef {{ status: number, ok: boolean, body: any }} Answer
 */

/** Where the console sends a visitor who is not signed in. */
export const LOGIN_PAGE = '/_utils/session.html';

/** Sent on `window` after any 401 answer but one of `/_session`. */
export const UNAUTHORIZED_EVENT = 'divan:unauthorized';

export const NETWORK_ERROR = 'Could not reach the server. Check your connection, then try again.';

/**
 * One request. `Accept: application/json` gets a 401 rather than the browser redirect, and
 * `X-CouchDB-WWW-Authenticate: Cookie` keeps a Basic challenge from opening the browser's dialog.
 * A network failure is an answer with status 0.
 *
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<Answer>}
 */
export async function api(method, path, body) {
  const sent = body === undefined ? undefined : { contentType: 'application/json', text: JSON.stringify(body) };
  const response = await send(method, path, 'application/json', sent);
  if (response === undefined) return { status: 0, ok: false, body: undefined };
  let data;
  try {
    data = await response.json();
  } catch {
    data = undefined;
  }
  return { status: response.status, ok: response.ok, body: data };
}

/**
 * @typedef {{ status: number, ok: boolean, headers: Record<string, string>, bytes: Uint8Array }} RawAnswer
 */

/**
 * One request whose answer is not necessarily JSON (a show or an update function's): its status,
 * headers and bytes, untouched. The body goes as it is typed, with its content type. Accepting any
 * type lets a function's `provides` choose, and still gets a 401 rather than the login redirect.
 *
 * @param {string} method
 * @param {string} path
 * @param {{ contentType: string, text: string }} [body]
 * @returns {Promise<RawAnswer>}
 */
export async function raw(method, path, body) {
  const response = await send(method, path, '*/*', body);
  if (response === undefined) return { status: 0, ok: false, headers: {}, bytes: new Uint8Array(0) };
  /** @type {Record<string, string>} */
  const headers = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  let bytes;
  try {
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch {
    return { status: 0, ok: false, headers, bytes: new Uint8Array(0) };
  }
  return { status: response.status, ok: response.ok, headers, bytes };
}

/**
 * The fetch both kinds of request share: same origin, the session cookie, no cache, no redirect
 * followed. Undefined when the server could not be reached.
 *
 * @param {string} method
 * @param {string} path
 * @param {string} accept
 * @param {{ contentType: string, text: string }} [body]
 * @returns {Promise<Response | undefined>}
 */
async function send(method, path, accept, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: accept, 'X-CouchDB-WWW-Authenticate': 'Cookie' };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store', redirect: 'manual' };
  if (body !== undefined) {
    headers['Content-Type'] = body.contentType;
    init.body = body.text;
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    return undefined;
  }
  // A 401 may mean the session ended: the console looks (app.js) and offers a new sign-in.
  if (response.status === 401 && path !== '/_session' && typeof window !== 'undefined') window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
  return response;
}

/**
 * A failed answer in words, with the server's own error and reason.
 *
 * @param {string} what
 * @param {Answer} answer
 */
export function failure(what, answer) {
  if (answer.status === 0) return `${what}: ${NETWORK_ERROR}`;
  const body = answer.body;
  const error = body && typeof body === 'object' && typeof body.error === 'string' ? body.error : '';
  const reason = body && typeof body === 'object' && typeof body.reason === 'string' ? body.reason : '';
  const detail = [error, reason].filter((part) => part !== '').join(': ');
  if (answer.status === 401) return `${what}: you are not signed in, or your session has ended (401${detail === '' ? '' : ` ${detail}`}). Sign in again.`;
  if (answer.status === 403) return `${what}: you are not allowed to (403${detail === '' ? '' : ` ${detail}`}).`;
  return `${what} (${answer.status}${detail === '' ? '' : ` ${detail}`}).`;
}

/**
 * The path of a database, a document or an attachment, each segment encoded. A design
 * document keeps its `_design/` prefix unencoded, as CouchDB expects.
 *
 * @param {string} db
 * @param {string} [id]
 * @param {string} [attachment]
 */
export function dbPath(db, id, attachment) {
  let path = `/${encodeURIComponent(db)}`;
  if (id !== undefined) {
    const design = id.startsWith('_design/') ? '_design/' : id.startsWith('_local/') ? '_local/' : '';
    path += `/${design}${encodeURIComponent(id.slice(design.length))}`;
  }
  if (attachment !== undefined) path += `/${attachment.split('/').map(encodeURIComponent).join('/')}`;
  return path;
}

/**
 * A query string from an object; string values of JSON parameters are JSON-encoded by the caller.
 *
 * @param {Record<string, string | number | boolean | undefined>} params
 */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The login page, returning to where the console is now. */
export function loginUrl(reason = 'Sign in to use the admin console.') {
  const here = `${location.pathname}${location.hash}`;
  return `${LOGIN_PAGE}${query({ return: here, reason })}`;
}
