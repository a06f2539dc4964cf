/**
 * Helpers for the `/_session`, cookie, Basic, chain and TLS conformance tests: reading and checking
 * `Set-Cookie: AuthSession=…`, decoding tokens, minting cookies the way CouchDB does, creating users
 * and changing settings through the `_config` API with a restore.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { createHmac, pbkdf2 } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HttpResponse } from './http.js';
import type { TestServer } from './server.js';

const pbkdf2Async = promisify(pbkdf2);

/** Lockout off and cheap hashes: the tests here count neither attempts nor PBKDF2 time. */
export const FAST_INI = '[chttpd_auth_lockout]\nmode = off\n[chttpd_auth]\niterations = 1000\n';

export const FAILED_LOGIN = { error: 'unauthorized', reason: 'Name or password is incorrect.' };
export const MALFORMED_COOKIE = { error: 'bad_request', reason: 'Malformed AuthSession cookie. Please clear your cookies.' };
export const BAD_CONTENT_TYPE = {
  error: 'bad_content_type',
  reason: "Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'",
};
export const AUTH_REQUIRED = { error: 'unauthorized', reason: 'Authentication required.' };
export const NOT_SERVER_ADMIN = { error: 'unauthorized', reason: 'You are not a server admin.' };
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

const DAY = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
/** `Wdy, DD-Mon-YYYY HH:MM:SS GMT` (RFC 2109 with dashes, as mochiweb writes it). */
export const EXPIRES_DATE = `${DAY}, (\\d{2})-${MONTH}-(\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT`;

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Every Set-Cookie header of a response. */
export function setCookies(res: HttpResponse): string[] {
  const raw = res.headers['set-cookie'];
  return raw === undefined ? [] : [raw].flat();
}

/** The only `AuthSession` Set-Cookie of a response; fails when there is none or more than one. */
export function authSessionHeader(res: HttpResponse): string {
  const cookies = setCookies(res).filter((cookie) => cookie.startsWith('AuthSession='));
  assert.equal(cookies.length, 1, `expected exactly one AuthSession Set-Cookie, got ${JSON.stringify(setCookies(res))}`);
  return cookies[0]!;
}

export function assertNoSetCookie(res: HttpResponse, message = 'no Set-Cookie expected'): void {
  assert.deepEqual(setCookies(res), [], message);
}

/** Parses an `Expires` date of a cookie to epoch seconds, checking the weekday too. */
export function parseExpires(date: string): number {
  const match = new RegExp(`^${EXPIRES_DATE}$`).exec(date);
  assert.ok(match, `not a cookie date: ${date}`);
  const [, day, dd, mon, yyyy, hh, mm, ss] = match;
  const ms = Date.UTC(Number(yyyy), MONTHS.indexOf(mon!), Number(dd), Number(hh), Number(mm), Number(ss));
  assert.equal(DAYS[new Date(ms).getUTCDay()], day, `weekday of ${date}`);
  return ms / 1000;
}

export interface CookieAttributes {
  /** Max-Age and Expires expected (allow_persistent_cookies); the number is the Max-Age. */
  maxAge?: number;
  secure?: boolean;
  domain?: string;
  sameSite?: string;
}

/**
 * Checks a Set-Cookie header against CouchDB's exact format and attribute order
 * (`AuthSession=<v>; Version=1[; Expires=…; Max-Age=…][; Secure][; Domain=…]; Path=/; HttpOnly[; SameSite=…]`),
 * with `Expires` = now + Max-Age (± 3 s). Returns the value. `value: ''` checks a clearing cookie.
 */
export function assertAuthSessionCookie(header: string, attributes: CookieAttributes = { maxAge: 600 }, value?: string): string {
  let pattern = `^AuthSession=(${value === '' ? '' : '[A-Za-z0-9_-]+'}); Version=1`;
  if (attributes.maxAge !== undefined) pattern += `; Expires=(${EXPIRES_DATE}); Max-Age=${attributes.maxAge}`;
  if (attributes.secure) pattern += '; Secure';
  if (attributes.domain !== undefined) pattern += `; Domain=${attributes.domain.replace(/\./g, '\\.')}`;
  pattern += '; Path=/; HttpOnly';
  if (attributes.sameSite !== undefined) pattern += `; SameSite=${attributes.sameSite}`;
  const match = new RegExp(`${pattern}$`).exec(header);
  assert.ok(match, `Set-Cookie ${JSON.stringify(header)} does not match ${pattern}`);
  if (attributes.maxAge !== undefined) {
    const expires = parseExpires(match[2]!);
    const expected = nowSeconds() + attributes.maxAge;
    assert.ok(Math.abs(expires - expected) <= 3, `Expires ${match[2]} should be about now + ${attributes.maxAge} s`);
  }
  return match[1]!;
}

/** The clearing cookie: an empty value with the same attributes (spec 2.3, reference §3.5). */
export function assertClearingCookie(res: HttpResponse, attributes: CookieAttributes = { maxAge: 600 }): void {
  assertAuthSessionCookie(authSessionHeader(res), attributes, '');
}

/** The value of the response's only AuthSession cookie, checked against the default format. */
export function sessionValue(res: HttpResponse, attributes: CookieAttributes = { maxAge: 600 }): string {
  return assertAuthSessionCookie(authSessionHeader(res), attributes);
}

export interface DecodedToken {
  name: string;
  timeHex: string;
  time: number;
  mac: Buffer;
}

/** Decodes an AuthSession value: base64url of `name:TIMEHEX:` + raw MAC. */
export function decodeToken(value: string): DecodedToken {
  assert.match(value, /^[A-Za-z0-9_-]+$/, 'base64url alphabet, no padding');
  const bytes = Buffer.from(value, 'base64url');
  assert.equal(bytes.toString('base64url'), value, 'canonical unpadded base64url');
  const first = bytes.indexOf(0x3a);
  const second = bytes.indexOf(0x3a, first + 1);
  assert.ok(first > 0 && second > first, 'name:TIMEHEX:MAC');
  const timeHex = bytes.subarray(first + 1, second).toString('latin1');
  return { name: bytes.subarray(0, first).toString('utf8'), timeHex, time: parseInt(timeHex, 16), mac: bytes.subarray(second + 1) };
}

const NODE_DIGESTS: Record<string, string> = { sha: 'sha1', sha256: 'sha256', sha512: 'sha512', md5: 'md5', blake2s: 'blake2s256' };

/**
 * A cookie built by hand exactly as reference §3.1 describes (independent of the server's codec):
 * base64url(`name:HEXTIME:` ‖ HMAC_alg(secret ‖ salt, `name:HEXTIME`)).
 */
export function handMadeCookie(name: string, timeHex: string, secret: string, salt: string, algorithm = 'sha256'): string {
  const signed = Buffer.from(`${name}:${timeHex}`, 'utf8');
  const mac = createHmac(NODE_DIGESTS[algorithm] ?? algorithm, Buffer.concat([Buffer.from(secret), Buffer.from(salt)])).update(signed).digest();
  return Buffer.concat([signed, Buffer.from(':'), mac]).toString('base64url');
}

export function hexTime(seconds: number): string {
  return seconds.toString(16).toUpperCase();
}

export function basic(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`, 'utf8').toString('base64')}`;
}

export function cookie(value: string): Record<string, string> {
  return { Cookie: `AuthSession=${value}` };
}

/** Asserts an exact JSON body, byte for byte (key order included), with the trailing newline. */
export function assertJsonText(res: HttpResponse, expected: unknown): void {
  assert.equal(res.text, `${JSON.stringify(expected)}\n`);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['cache-control'], 'must-revalidate');
}

const CONFIG = '/_node/_local/_config';

/** A config value through `_config` (admin Basic); undefined when not set. */
export async function getConfig(server: TestServer, section: string, key: string, headers?: Record<string, string>): Promise<string | undefined> {
  const res = headers ? await server.request(`${CONFIG}/${section}/${encodeURIComponent(key)}`, { headers }) : await server.admin(`${CONFIG}/${section}/${encodeURIComponent(key)}`);
  if (res.status === 404) return undefined;
  assert.equal(res.status, 200, `GET _config/${section}/${key}: ${res.text}`);
  return res.body as string;
}

/**
 * Sets (string) or deletes (undefined) a config value through `_config`. `headers` replace the
 * admin's Basic credentials (e.g. an admin cookie when Basic is switched off).
 */
export async function putConfig(server: TestServer, section: string, key: string, value: string | undefined, headers?: Record<string, string>): Promise<void> {
  const path = `${CONFIG}/${section}/${encodeURIComponent(key)}`;
  const options = { method: value === undefined ? 'DELETE' : 'PUT', ...(value === undefined ? {} : { body: JSON.stringify(value) }) };
  const res = headers ? await server.request(path, { ...options, headers }) : await server.admin(path, options);
  if (value === undefined && res.status === 404) return;
  assert.equal(res.status, 200, `${options.method} _config/${section}/${key}: ${res.status} ${res.text}`);
}

/**
 * The value a key has in the server's writable layer (`DATA/test.ini`), undefined when that file does
 * not set it. `_config` shows effective values (defaults included), so a restore that PUT them back
 * would pin a default into the user layer and hide a `[couch_httpd_auth]` fallback.
 */
export function writableValue(server: TestServer, section: string, key: string): string | undefined {
  let current = '';
  let found: string | undefined;
  for (const line of readFileSync(join(server.dataDir, 'test.ini'), 'utf8').split(/\r?\n/)) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      current = header[1]!.trim();
      continue;
    }
    if (current !== section || /^\s*;/.test(line)) continue;
    const equals = line.indexOf('=');
    if (equals !== -1 && line.slice(0, equals).trim() === key) found = line.slice(equals + 1).trim();
  }
  return found;
}

/**
 * Runs `fn` with settings changed through `_config`, then restores each previous value of the
 * writable layer (or deletes the key) in reverse order, even when `fn` fails.
 */
export async function withConfig<T>(server: TestServer, settings: ReadonlyArray<readonly [string, string, string | undefined]>, fn: () => Promise<T>): Promise<T> {
  const previous: Array<[string, string, string | undefined]> = [];
  try {
    for (const [section, key, value] of settings) {
      previous.push([section, key, writableValue(server, section, key)]);
      await putConfig(server, section, key, value);
    }
    return await fn();
  } finally {
    for (const [section, key, value] of previous.reverse()) await putConfig(server, section, key, value);
  }
}

/** Creates a `_users` user through the admin; returns its stored salt. */
export async function createUser(server: TestServer, name: string, password: string, roles: string[] = []): Promise<string> {
  const res = await server.admin(`/_users/org.couchdb.user:${encodeURIComponent(name)}`, {
    method: 'PUT',
    body: { _id: `org.couchdb.user:${name}`, name, type: 'user', roles, password },
  });
  assert.equal(res.status, 201, `create user ${name}: ${res.text}`);
  return userSalt(server, name);
}

/** Creates a user from ready-made hash fields (no `password`), e.g. a 600000-iteration hash. */
export async function createHashedUser(server: TestServer, name: string, fields: Record<string, unknown>, roles: string[] = []): Promise<void> {
  const res = await server.admin(`/_users/org.couchdb.user:${encodeURIComponent(name)}`, {
    method: 'PUT',
    body: { _id: `org.couchdb.user:${name}`, name, type: 'user', roles, ...fields },
  });
  assert.equal(res.status, 201, `create user ${name}: ${res.text}`);
}

/** PBKDF2-SHA256 fields of a user document, computed here (async, libuv pool). */
export async function pbkdf2Fields(password: string, salt: string, iterations: number): Promise<Record<string, unknown>> {
  const key = await pbkdf2Async(password, salt, iterations, 32, 'sha256');
  return { password_scheme: 'pbkdf2', pbkdf2_prf: 'sha256', salt, iterations, derived_key: key.toString('hex') };
}

export async function userDoc(server: TestServer, name: string): Promise<Record<string, unknown>> {
  const res = await server.admin(`/_users/org.couchdb.user:${encodeURIComponent(name)}`);
  assert.equal(res.status, 200, `read user ${name}: ${res.text}`);
  return res.body as Record<string, unknown>;
}

export async function userSalt(server: TestServer, name: string): Promise<string> {
  const salt = (await userDoc(server, name))['salt'];
  assert.equal(typeof salt, 'string');
  return salt as string;
}

/** The salt of an `[admins]` entry: the second comma field of its hash string. */
export async function adminSalt(server: TestServer, name = 'root'): Promise<string> {
  const value = await getConfig(server, 'admins', name);
  assert.ok(value !== undefined, `[admins] ${name} is set`);
  const salt = value.split(',')[1];
  assert.match(salt ?? '', /^[0-9a-f]{32}$/);
  return salt!;
}

/** The server's cookie secret; a login first makes sure one exists. */
export async function serverSecret(server: TestServer): Promise<string> {
  let secret = await getConfig(server, 'chttpd_auth', 'secret');
  if (secret === undefined) {
    const login = await logIn(server, 'root', 'r00t-pass');
    assert.equal(login.status, 200);
    secret = await getConfig(server, 'chttpd_auth', 'secret');
  }
  assert.ok(secret !== undefined && secret !== '', 'a cookie secret exists');
  return secret;
}

/** POST /_session with a JSON body. */
export function logIn(server: TestServer, name: string, password: string, options: { query?: string; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  return server.request(`/_session${options.query ?? ''}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...options.headers },
    body: JSON.stringify({ name, password }),
  });
}

/** Logs in and returns the AuthSession cookie value. */
export async function sessionCookie(server: TestServer, name: string, password: string, attributes: CookieAttributes = { maxAge: 600 }): Promise<string> {
  const res = await logIn(server, name, password);
  assert.equal(res.status, 200, `login ${name}: ${res.text}`);
  return sessionValue(res, attributes);
}

/** `GET /_session` with extra headers. */
export function whoAmI(server: TestServer, headers: Record<string, string> = {}, query = ''): Promise<HttpResponse> {
  return server.request(`/_session${query}`, { headers });
}

export function anonymousSession(handlers: string[] = ['cookie', 'default'], db = '_users'): unknown {
  return { ok: true, userCtx: { name: null, roles: [] }, info: { authentication_handlers: handlers, authentication_db: db } };
}

export function authenticatedSession(name: string, roles: string[], handler: string, handlers: string[] = ['cookie', 'default'], db = '_users'): unknown {
  return { ok: true, userCtx: { name, roles }, info: { authentication_handlers: handlers, authenticated: handler, authentication_db: db } };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
