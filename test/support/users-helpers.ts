import { createHash, pbkdf2Sync } from 'node:crypto';
import type { HttpOptions, HttpResponse } from './http.js';
import type { TestServer } from './server.js';

/**
 * Helpers for the `_users`, credential and lockout tests. This module imports no server code (only
 * types), so a test may load it before `src/` and still patch `node:crypto` first.
 */

/** Cheap hashes for servers whose tests do not need the 600000-iteration default. */
export const FAST_INI = '[chttpd_auth]\niterations = 1000\n';
/** Lockout is not the subject of a test file: switch it off so repeated failures stay 401. */
export const NO_LOCKOUT_INI = '[chttpd_auth_lockout]\nmode = off\n';

export const USER_PREFIX = 'org.couchdb.user:';

export const BAD_CREDENTIALS = { error: 'unauthorized', reason: 'Name or password is incorrect.' } as const;
export const LOCKED = { error: 'forbidden', reason: 'Account is temporarily locked due to multiple authentication failures' } as const;
export const MISSING = { error: 'not_found', reason: 'missing' } as const;
export const CONFLICT = { error: 'conflict', reason: 'Document update conflict.' } as const;
export const NOT_A_SERVER_ADMIN = { error: 'unauthorized', reason: 'You are not a server admin.' } as const;
export const NOT_AUTHORIZED_FOR_DB = { error: 'unauthorized', reason: 'You are not authorized to access this db.' } as const;
export const NOT_ALLOWED_FOR_DB = { error: 'forbidden', reason: 'You are not allowed to access this db.' } as const;
export const CONFLICTED_USER_DOC = {
  error: 'unauthorized',
  reason: 'User document conflicts must be resolved before the document is used for authentication purposes.',
} as const;

export const forbidden = (reason: string) => ({ error: 'forbidden', reason });

/** Status and body compared together, so a failure shows the whole answer the server gave. */
export function answerOf(res: HttpResponse): { status: number; body: unknown } {
  return { status: res.status, body: res.body };
}

/** `/_users/org.couchdb.user:<name>`, the name percent-encoded. */
export function userPath(name: string, query = ''): string {
  return `/_users/${USER_PREFIX}${encodeURIComponent(name)}${query}`;
}

export function basicHeader(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`, 'utf8').toString('base64')}`;
}

/** A user doc as clients write it. */
export function userBody(name: string, password: string | undefined, roles: unknown = [], extra: Record<string, unknown> = {}) {
  const body: Record<string, unknown> = { _id: USER_PREFIX + name, name, type: 'user', roles };
  if (password !== undefined) body['password'] = password;
  return { ...body, ...extra };
}

/** Creates a user as the test admin; throws unless the server answers 201. */
export async function createUser(
  server: TestServer,
  name: string,
  password: string,
  roles: string[] = [],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await server.admin(userPath(name), { method: 'PUT', body: userBody(name, password, roles, extra) });
  if (res.status !== 201) throw new Error(`creating user ${name}: ${res.status} ${res.text}`);
  return res.body.rev as string;
}

/**
 * A secondary users database `db` (URL-encoded, as `acme%2F_users`) whose admin is `ada` and whose
 * member is `mia` (both users of the server, created here), holding the user docs of `names`.
 */
export async function seedSecondaryUsersDb(server: TestServer, db: string, users: readonly [string, string][], names: readonly string[]): Promise<void> {
  for (const [name, password] of users) await createUser(server, name, password);
  if ((await server.admin(`/${db}`, { method: 'PUT' })).status !== 201) throw new Error(`creating ${db}`);
  const security = { admins: { names: ['ada'], roles: [] }, members: { names: ['mia'], roles: [] } };
  if ((await server.admin(`/${db}/_security`, { method: 'PUT', body: security })).status !== 200) throw new Error(`securing ${db}`);
  for (const name of names) {
    const res = await server.admin(`/${db}/${encodeURIComponent(USER_PREFIX + name)}`, { method: 'PUT', body: userBody(name, `${name}-acme-pw`, [], { team: 'acme' }) });
    if (res.status !== 201) throw new Error(`creating ${name} in ${db}: ${res.status} ${res.text}`);
  }
}

/** The stored user doc as the admin sees it (undefined when missing). */
export async function readUser(server: TestServer, name: string): Promise<Record<string, any> | undefined> {
  const res = await server.admin(userPath(name));
  return res.status === 200 ? res.body : undefined;
}

/** POST /_session with a JSON body. */
export function postSession(server: TestServer, name: string, password: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return server.request('/_session', { method: 'POST', body: { name, password }, headers });
}

/** The `AuthSession=<value>` pair of a response's Set-Cookie, or undefined. */
export function authSessionOf(res: HttpResponse): string | undefined {
  const header = res.headers['set-cookie'];
  const cookies = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const cookie = cookies.find((value) => value.startsWith('AuthSession='));
  return cookie?.split(';')[0];
}

/** Logs in with POST /_session and returns the `AuthSession=…` cookie pair; throws on failure. */
export async function loginCookie(server: TestServer, name: string, password: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await postSession(server, name, password, headers);
  const cookie = authSessionOf(res);
  if (res.status !== 200 || cookie === undefined || cookie === 'AuthSession=') {
    throw new Error(`login of ${name}: ${res.status} ${res.text}`);
  }
  return cookie;
}

/** GET /_session with the given credentials. */
export function whoAmI(server: TestServer, options: { auth?: [string, string]; cookie?: string; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie !== undefined) headers['Cookie'] = options.cookie;
  const request: HttpOptions = { headers };
  if (options.auth) request.auth = options.auth;
  return server.request('/_session', request);
}

/** The body of GET /_session for a user authenticated by `handler` (none: anonymous). */
export function sessionBody(name: string | null, roles: string[], handler?: 'cookie' | 'default') {
  const info: Record<string, unknown> = { authentication_handlers: ['cookie', 'default'] };
  if (handler !== undefined) info['authenticated'] = handler;
  info['authentication_db'] = '_users';
  return { ok: true, userCtx: { name, roles }, info };
}

export const ANONYMOUS_SESSION = sessionBody(null, []);

/** `PUT /_node/_local/_config/{section}/{key}` as the admin; throws unless 200. */
export async function setConfig(server: TestServer, section: string, key: string, value: string): Promise<void> {
  const res = await server.admin(`/_node/_local/_config/${section}/${encodeURIComponent(key)}`, { method: 'PUT', body: JSON.stringify(value) });
  if (res.status !== 200) throw new Error(`setting [${section}] ${key}: ${res.status} ${res.text}`);
}

/** Opens anonymous sign-up: `users_db_security_editable`, then an empty `_users/_security`. */
export async function openSignup(server: TestServer): Promise<void> {
  await setConfig(server, 'couchdb', 'users_db_security_editable', 'true');
  const res = await server.admin('/_users/_security', { method: 'PUT', body: {} });
  if (res.status !== 200) throw new Error(`opening _users/_security: ${res.status} ${res.text}`);
}

/** `DELETE /_node/_local/_config/{section}/{key}`; a missing key is fine. */
export async function deleteConfig(server: TestServer, section: string, key: string): Promise<void> {
  const res = await server.admin(`/_node/_local/_config/${section}/${encodeURIComponent(key)}`, { method: 'DELETE' });
  if (res.status !== 200 && res.status !== 404) throw new Error(`deleting [${section}] ${key}: ${res.status} ${res.text}`);
}

/** Sends `text` byte for byte as an `application/json` body (duplicate keys survive the trip). */
export function rawJson(server: TestServer, path: string, method: string, text: string, options: HttpOptions = {}): Promise<HttpResponse> {
  return server.request(path, { ...options, method, body: text, headers: { 'Content-Type': 'application/json', ...options.headers } });
}

/** Polls `probe` until `done` holds or `timeoutMs` passes; returns the last value either way. */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    value = await probe();
  }
  return value;
}

/** CouchDB's PBKDF2 over the salt's ASCII bytes, lowercase hex, dkLen = the PRF's output size. */
export function expectedDerivedKey(password: string, salt: string, iterations: number, prf: 'sha' | 'sha256' | 'sha512' = 'sha256'): string {
  const digest = prf === 'sha' ? 'sha1' : prf;
  const length = { sha1: 20, sha256: 32, sha512: 64 }[digest];
  return pbkdf2Sync(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), iterations, length, digest).toString('hex');
}

export function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

let addressCounter = 0;
/**
 * A fresh client address for `X-Forwarded-For`: loopback is a trusted proxy by default, so the
 * last entry of that header is the address lockout counts against.
 */
export function freshAddress(): string {
  addressCounter++;
  return `10.${(process.pid >> 8) & 0xff}.${(addressCounter >> 8) & 0xff}.${addressCounter & 0xff}`;
}

export function fromAddress(address: string): Record<string, string> {
  return { 'X-Forwarded-For': address };
}
