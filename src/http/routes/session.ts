import { refusalOutcome } from '../../auth/instrumented.js';
import { isCouchError } from '../../errors/couch-error.js';
import { badContentType, badRequest, methodNotAllowed, pleaseLogin, requestBodyNotObject } from '../../errors/catalog.js';
import type { JsonObject } from '../../json/json.js';
import { parseJsonBytes, type Request } from '../request.js';
import { json, type Reply } from '../reply.js';
import { JsonText } from '../../json/json-text.js';
import type { AuthChain } from '../../auth/chain.js';
import type { Services } from '../services.js';
import { absoluteUrl } from '../urls.js';

const SESSION_METHODS = ['GET', 'HEAD', 'POST', 'DELETE'];
const FAILED_LOGIN_REASON = 'Name or password is incorrect.';

/** `/_session`: log in (POST), who am I (GET/HEAD), log out (DELETE). */
export function session(request: Request, services: Services): Reply | Promise<Reply> {
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      // Not an async function: the path every proxy and JWT client takes answers without a promise.
      return sessionInfo(request, services);
    case 'POST':
      return logIn(request, services);
    case 'DELETE':
      return logOut(request, services);
    default:
      throw methodNotAllowed(SESSION_METHODS);
  }
}

function sessionInfo(request: Request, services: Services): Reply {
  const { userCtx, handler } = request.auth;
  if (userCtx.name === null && request.query.get('basic') === 'true') throw pleaseLogin();
  const info = sessionInfoText(services.chain(), handler, services.databases.usersDbName);
  return { status: 200, body: new JsonText(`{"ok":true,"userCtx":{"name":${JSON.stringify(userCtx.name)},"roles":${JSON.stringify(userCtx.roles)}},"info":${info}}\n`) };
}

/**
 * The `info` member of `GET /_session`, serialised once per chain, handler and users database:
 * only the user context differs from one request to the next.
 */
const infoTexts = new WeakMap<AuthChain, Map<string, string>>();

function sessionInfoText(chain: AuthChain, handler: string | undefined, usersDb: string): string {
  let texts = infoTexts.get(chain);
  if (texts === undefined) infoTexts.set(chain, (texts = new Map()));
  const key = `${handler ?? ''}\u0000${usersDb}`;
  let text = texts.get(key);
  if (text === undefined) {
    const info: JsonObject = { authentication_handlers: chain.handlerNames };
    if (handler !== undefined) info['authenticated'] = handler;
    info['authentication_db'] = usersDb;
    text = JSON.stringify(info);
    // A handful of handlers and users databases; a bound all the same.
    if (texts.size > 64) texts.clear();
    texts.set(key, text);
  }
  return text;
}

/**
 * The login form or JSON body. Every member must be a string: CouchDB crashes (500) on anything
 * else, Divan answers 400.
 */
async function readCredentials(request: Request, services: Services): Promise<Map<string, string>> {
  const type = request.contentType();
  const maxBytes = services.config.getInteger('couchdb', 'max_document_size');
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams((await request.body(maxBytes)).toString('utf8'));
    const fields = new Map<string, string>();
    // As CouchDB's proplists lookup: the first occurrence of a form field counts.
    for (const [key, value] of form) if (!fields.has(key)) fields.set(key, value);
    return fields;
  }
  if (type.startsWith('application/json')) {
    const body = parseJsonBytes(await request.body(maxBytes));
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
    const fields = new Map<string, string>();
    for (const [key, value] of Object.entries(body)) {
      if (typeof value !== 'string') throw badRequest(`The ${JSON.stringify(key)} field must be a string.`);
      fields.set(key, value);
    }
    return fields;
  }
  throw badContentType("Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'");
}

/**
 * `next`/`fail` must be a path on this server. CouchDB accepts `//evil.example` (an open redirect);
 * Divan refuses it and anything a browser would turn into another origin.
 */
export function redirectPath(value: string): string {
  if (!value.startsWith('/')) throw badRequest('path must begin with a /.');
  if (value.startsWith('//') || value.startsWith('/\\') || /[\u0000-\u001f\u007f\\]/.test(value)) {
    throw badRequest('Redirects must stay on this server: give a path such as /app.');
  }
  return encodeURI(value);
}

async function logIn(request: Request, services: Services): Promise<Reply> {
  const fields = await readCredentials(request, services);
  const username = fields.get('username');
  const nameField = fields.get('name');
  if (username !== undefined && nameField !== undefined && username !== nameField) {
    throw badRequest('request body contains different usernames');
  }
  const name = username ?? nameField;
  if (name === undefined) throw badRequest('request body must contain a username');
  const password = fields.get('password') ?? '';
  // The TOTP code of users with a second factor (ignored for the others, as CouchDB).
  const token = fields.get('token');
  const secure = request.secure;
  const next = request.query.get('next');
  const fail = request.query.get('fail');

  let user;
  try {
    // A wrong or missing code gives the same 401 as a wrong password, through the same path below
    // (clearing cookie, `?fail=`), so a response never tells that the password was right.
    user = await services.authenticator.authenticate(name, password, request.peer, 'session', token);
    services.metrics.authOutcome('cookie', 'success');
  } catch (error) {
    const refusal = refusalOutcome('cookie', error);
    if (refusal) services.metrics.authOutcome('cookie', refusal);
    if (!isCouchError(error) || error.status !== 401 || error.reason !== FAILED_LOGIN_REASON) throw error;
    const headers: Record<string, string> = { 'Set-Cookie': services.cookies.clearingCookie(secure) };
    if (fail !== null) headers['Location'] = absoluteUrl(request, redirectPath(fail));
    return json(fail !== null ? 302 : 401, error.toJSON(), headers);
  }
  const headers: Record<string, string> = { 'Set-Cookie': services.cookies.setCookie(await services.cookies.mint(name, user.salt), secure) };
  if (next !== null) {
    headers['Location'] = absoluteUrl(request, redirectPath(next));
    return json(302, { ok: true, name: null, roles: user.roles }, headers);
  }
  return json(200, { ok: true, name, roles: user.roles }, headers);
}

async function logOut(request: Request, services: Services): Promise<Reply> {
  const headers: Record<string, string> = { 'Set-Cookie': services.cookies.clearingCookie(request.secure) };
  const next = request.query.get('next');
  if (next !== null) {
    headers['Location'] = absoluteUrl(request, redirectPath(next));
    return json(302, { ok: true }, headers);
  }
  return json(200, { ok: true }, headers);
}
