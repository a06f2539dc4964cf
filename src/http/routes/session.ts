import { refusalOutcome } from '../../auth/instrumented.js';
import { isCouchError } from '../../errors/couch-error.js';
import { badContentType, badRequest, methodNotAllowed, pleaseLogin, requestBodyNotObject } from '../../errors/catalog.js';
import type { JsonObject } from '../../json/json.js';
import { parseJsonBytes, type Request } from '../request.js';
import { json, type Reply } from '../reply.js';
import type { Services } from '../services.js';
import { absoluteUrl } from '../urls.js';

const SESSION_METHODS = ['GET', 'HEAD', 'POST', 'DELETE'];
const FAILED_LOGIN_REASON = 'Name or password is incorrect.';

/** `/_session`: log in (POST), who am I (GET/HEAD), log out (DELETE). */
export async function session(request: Request, services: Services): Promise<Reply> {
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return sessionInfo(request, services);
    case 'POST':
      return logIn(request, services);
    case 'DELETE':
      return logOut(request, services);
    default:
      throw methodNotAllowed(SESSION_METHODS);
  }
}

async function sessionInfo(request: Request, services: Services): Promise<Reply> {
  const { userCtx, handler } = request.auth;
  if (userCtx.name === null && request.query.get('basic') === 'true') throw pleaseLogin();
  const info: JsonObject = { authentication_handlers: services.chain().handlerNames };
  if (handler !== undefined) info['authenticated'] = handler;
  info['authentication_db'] = services.databases.usersDbName;
  return json(200, { ok: true, userCtx: { name: userCtx.name, roles: userCtx.roles }, info });
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
