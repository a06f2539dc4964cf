/**
 * What the benchmarks of authentication share: Divan started with the four authentication handlers,
 * a proxy secret and JWT keys; a user, a members-only database and a document on any
 * CouchDB-compatible server; and the scenarios measured on them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { generateKeyPair, type KeyPair } from '../test/support/key-pairs.js';
import { call, startProcess, type Running } from './bench-support.js';

const MAIN = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'dist', 'src', 'main.js');

export const basic = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
export const JSON_HEADERS = { 'Content-Type': 'application/json' };

export interface ScenarioRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Each request gets its own path (path + a counter), e.g. to create new documents. */
  uniquePath?: boolean;
}

export interface Scenario {
  name: string;
  goal?: { ratio?: number };
  request: ScenarioRequest;
  /** For a `GET /_session` scenario: the user and handler its answer must name (`info.authenticated`). */
  identity?: { name: string; handler: string };
}

/**
 * Why a scenario's sample answer does not show the identity it is meant to measure, or undefined.
 * A server that ignores the credentials answers `GET /_session` with 200 all the same (anonymous),
 * and would be measured on a cheaper path than the one named.
 */
export function identityProblem(scenario: Scenario, body: string): string | undefined {
  const expected = scenario.identity;
  if (expected === undefined) return undefined;
  let answer: { userCtx?: { name?: unknown }; info?: { authenticated?: unknown } };
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    return `answered ${body.slice(0, 80)}, not JSON`;
  }
  const name = answer.userCtx?.name;
  const handler = answer.info?.authenticated;
  if (name === expected.name && handler === expected.handler) return undefined;
  return `answered as ${JSON.stringify(name ?? null)} authenticated by ${JSON.stringify(handler ?? null)}, not ${JSON.stringify(expected.name)} by ${JSON.stringify(expected.handler)}`;
}


export interface Setup {
  /** The benchmark user's name. */
  user: string;
  cookie: string;
  basic: string;
  proxy?: Record<string, string>;
  jwt?: { hs256: string; rs256: string; es256: string };
  db: string;
  doc: string;
  coldUsers: [string, string][];
}

/** Users, a members-only database with a document, and a cookie, on any CouchDB-compatible server. */
export async function prepare(url: string, admin: [string, string], coldUserCount: number, extras: { secret?: string; jwtKeys?: JwtKeys; warmRounds?: number }): Promise<Setup> {
  const adminAuth = { Authorization: basic(...admin) };
  const user = `bench${randomBytes(3).toString('hex')}`;
  const password = 'bench-pass';
  const putUser = (name: string, pass: string) =>
    call(url, `/_users/org.couchdb.user:${name}`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ name, password: pass, roles: [], type: 'user' }) });
  if ((await putUser(user, password)).status >= 300) throw new Error(`cannot create a user on ${url}`);
  const db = `bench-${randomBytes(3).toString('hex')}`;
  await call(url, `/${db}`, { method: 'PUT', headers: adminAuth });
  await call(url, `/${db}/_security`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ members: { names: [user], roles: [] }, admins: { names: [], roles: [] } }) });
  await call(url, `/${db}/doc1`, { method: 'PUT', headers: { ...adminAuth, ...JSON_HEADERS }, body: JSON.stringify({ title: 'benchmark document', n: 1 }) });
  const login = await call(url, '/_session', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ name: user, password }) });
  const cookie = String([login.headers['set-cookie']].flat()[0] ?? '').split(';')[0]!;
  const coldUsers: [string, string][] = [];
  await Promise.all(
    Array.from({ length: coldUserCount }, async (_, i) => {
      const name = `${user}-cold${i}`;
      await putUser(name, `cold-pass-${i}`);
      coldUsers.push([name, `cold-pass-${i}`]);
    }),
  );
  const setup: Setup = { user, cookie, basic: basic(user, password), db, doc: 'doc1', coldUsers };
  // Every worker process checks the password once (PBKDF2) before it is measured: new connections
  // go to the workers in turn, and a worker's verified-password cache is its own.
  for (let i = 0; i < (extras.warmRounds ?? 4 * availableParallelism()); i++) {
    await call(url, '/_session', { headers: { Authorization: setup.basic, Connection: 'close' } });
    await call(url, '/_session', { headers: { Cookie: cookie, Connection: 'close' } });
  }
  if (extras.secret) {
    setup.proxy = {
      'X-Auth-CouchDB-UserName': user,
      'X-Auth-CouchDB-Roles': 'bench',
      'X-Auth-CouchDB-Token': createHmac('sha256', extras.secret).update(user).digest('hex'),
    };
  }
  if (extras.jwtKeys) setup.jwt = await jwtTokens(user, extras.jwtKeys);
  return setup;
}


export interface JwtKeys {
  hmac: Buffer;
  rsa: KeyPair;
  ec: KeyPair;
}

/** A run's proxy secret and JWT keys: fresh for every run, given to every server measured. */
export function runSecrets(): { secret: string; keys: JwtKeys } {
  return {
    secret: randomBytes(16).toString('hex'),
    keys: {
      hmac: randomBytes(32),
      rsa: generateKeyPair({ type: 'rsa', modulusLength: 2048 }),
      ec: generateKeyPair({ type: 'ec', namedCurve: 'P-256' }),
    },
  };
}

export async function jwtTokens(sub: string, keys: JwtKeys): Promise<{ hs256: string; rs256: string; es256: string }> {
  const claims = { sub, exp: Math.floor(Date.now() / 1000) + 3600, '_couchdb.roles': ['bench'] };
  return {
    hs256: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(keys.hmac),
    rs256: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(keys.rsa.privateKey),
    es256: await new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).sign(keys.ec.privateKey),
  };
}

export function scenarios(setup: Setup, only?: string): Scenario[] {
  return allScenarios(setup).filter((scenario) => only === undefined || scenario.name.includes(only));
}

function allScenarios(setup: Setup): Scenario[] {
  const as = (handler: string) => ({ name: setup.user, handler });
  const list: Scenario[] = [
    { name: 'cookie GET /_session', goal: { ratio: 0.5 }, request: { path: '/_session', headers: { Cookie: setup.cookie } }, identity: as('cookie') },
    { name: 'Basic GET /_session (repeated)', goal: { ratio: 0.5 }, request: { path: '/_session', headers: { Authorization: setup.basic } }, identity: as('default') },
  ];
  if (setup.proxy) list.push({ name: 'proxy GET /_session (token)', goal: { ratio: 0.5 }, request: { path: '/_session', headers: setup.proxy }, identity: as('proxy') });
  if (setup.jwt) {
    const bearer = (token: string) => ({ path: '/_session', headers: { Authorization: `Bearer ${token}` } });
    list.push(
      { name: 'JWT HS256 GET /_session', goal: { ratio: 0.5 }, request: bearer(setup.jwt.hs256), identity: as('jwt') },
      { name: 'JWT RS256 GET /_session', goal: { ratio: 0.4 }, request: bearer(setup.jwt.rs256), identity: as('jwt') },
      { name: 'JWT ES256 GET /_session', goal: { ratio: 0.4 }, request: bearer(setup.jwt.es256), identity: as('jwt') },
    );
  }
  list.push(
    { name: 'anonymous GET /', request: { path: '/' } },
    { name: 'cookie GET /{db}/{doc}', goal: { ratio: 0.35 }, request: { path: `/${setup.db}/${setup.doc}`, headers: { Cookie: setup.cookie } } },
    {
      name: 'cookie PUT /{db}/{doc} (new docs)',
      goal: { ratio: 0.1 },
      request: { method: 'PUT', path: `/${setup.db}/w-`, headers: { Cookie: setup.cookie, ...JSON_HEADERS }, body: JSON.stringify({ title: 'benchmark write', n: 1 }), uniquePath: true },
    },
  );
  return list;
}


/** Both servers' log level during a run: no line per request. */
export const LOG_LEVEL = 'warning';

export const AUTH_HANDLERS =
  '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, proxy_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}';

/** A public key in PEM on one line, line breaks as `\\n` (how CouchDB's and Divan's `[jwt_keys]` hold them). */
export const pemLine = (key: JwtKeys['rsa']['publicKey']): string => String(key.export({ type: 'spki', format: 'pem' })).trim().replace(/\n/g, '\\n');

export function writeIni(file: string, secret: string, keys: JwtKeys): void {
  writeFileSync(
    file,
    [
      '[chttpd]',
      `authentication_handlers = ${AUTH_HANDLERS}`,
      '[chttpd_auth]',
      `secret = ${secret}`,
      'proxy_use_secret = true',
      '[jwt_keys]',
      `hmac:_default = ${keys.hmac.toString('base64')}`,
      `rsa:_default = ${pemLine(keys.rsa.publicKey)}`,
      `ec:_default = ${pemLine(keys.ec.publicKey)}`,
      '[log]',
      `level = ${LOG_LEVEL}`,
      '',
    ].join('\n'),
  );
}

/** Divan on a fresh data directory with `workers` processes, and its admin. */
export async function startDivan(workers: number, secret: string, keys: JwtKeys, launcher: string[] = []): Promise<{ divan: Running; admin: [string, string]; data: string }> {
  const data = mkdtempSync(join(tmpdir(), 'divan-bench-'));
  const ini = join(data, 'bench.ini');
  writeIni(ini, secret, keys);
  const admin: [string, string] = ['admin', randomBytes(8).toString('hex')];
  const divan = await startProcess(
    [MAIN, '--port', '0', '--workers', String(workers), '--data', data, '--config', ini],
    { COUCHDB_USER: admin[0], COUCHDB_PASSWORD: admin[1] },
    /Divan listening on (http:\/\/\S+)\n/,
    launcher,
  );
  return { divan, admin, data };
}
