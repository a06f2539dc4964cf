/**
 * Shared pieces of the hardening suite (test/hardening/): seeded property runs with case counts,
 * a raw HTTP/1.1 client that sends exactly the bytes it is given (node:http refuses control
 * characters in header values, which is half of what these tests send), the invariant every answer
 * must hold, and guards for prototype pollution and stray crashes.
 *
 * This module imports no server code, so a test may load it before patching `node:crypto`.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { TestContext } from 'node:test';

/**
 * `HARDENING_SEED` replays a run; each property derives its own seed from it and its name, so adding
 * a property does not change the cases of the others. `HARDENING_SCALE` multiplies every case count
 * (`HARDENING_SCALE=10 npm test` for a long local run).
 */
export const BASE_SEED = Number(process.env['HARDENING_SEED'] ?? 5984);
const SCALE = Number(process.env['HARDENING_SCALE'] ?? 1);

/** A 31-bit seed from the base seed and a property's name (FNV-1a). */
export function seedOf(name: string): number {
  let hash = 0x811c9dc5 ^ BASE_SEED;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 1;
}

export function runsOf(numRuns: number): number {
  return Math.max(1, Math.round(numRuns * (Number.isFinite(SCALE) && SCALE > 0 ? SCALE : 1)));
}

/** Cases tried per property in this process, for the closing figures. */
export const CASES = new Map<string, number>();

/**
 * fast-check parameters for one property, plus a counter the predicate bumps with `count()`.
 * `report(t)` prints "name: N cases (seed S)" as a test diagnostic.
 */
export function property(name: string, numRuns: number): {
  options: { seed: number; numRuns: number; endOnFailure: true };
  count: () => void;
  report: (t: TestContext) => void;
} {
  const seed = seedOf(name);
  CASES.set(name, 0);
  return {
    options: { seed, numRuns: runsOf(numRuns), endOnFailure: true },
    count: () => CASES.set(name, (CASES.get(name) ?? 0) + 1),
    report: (t) => t.diagnostic(`${name}: ${CASES.get(name)} cases (seed ${seed})`),
  };
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers keep every value. */
  headers: Map<string, string[]>;
  body: Buffer;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export type HeaderList = ReadonlyArray<readonly [string, string | Buffer]>;

export interface RawRequest {
  method?: string;
  target: string | Buffer;
  headers?: HeaderList;
  body?: string | Buffer;
}

/** The request bytes: `Host`, `Connection: close` and a `Content-Length` for a body are added. */
export function requestBytes(request: RawRequest): Buffer {
  const parts: Buffer[] = [
    Buffer.from(`${request.method ?? 'GET'} `, 'latin1'),
    typeof request.target === 'string' ? Buffer.from(request.target, 'utf8') : request.target,
    Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n', 'latin1'),
  ];
  for (const [name, value] of request.headers ?? []) {
    parts.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'utf8') : value, Buffer.from('\r\n'));
  }
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  if (body !== undefined) parts.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (body !== undefined) parts.push(body);
  return Buffer.concat(parts);
}

/** Parses one HTTP/1.1 response (the server always sends Content-Length). */
export function parseResponse(bytes: Buffer): RawResponse | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const head = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  if (!match) return undefined;
  const headers = new Map<string, string[]>();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const length = Number(headers.get('content-length')?.[0] ?? NaN);
  const body = bytes.subarray(end + 4, Number.isFinite(length) ? end + 4 + length : undefined);
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: Number(match[1]), headers, body, text, json };
}

/**
 * Sends `bytes` on a fresh connection and resolves with the answer once the server closes it (the
 * request says `Connection: close`). Rejects when no complete answer arrives within `timeoutMs`:
 * a hang is a failure like any other.
 */
export function rawSend(port: number, bytes: Buffer | string, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else reject(new Error(`no HTTP answer; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))}`));
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms (hang)`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Complete once Content-Length bytes of body are in; do not wait for the close.
      const parsed = parseResponse(Buffer.concat(chunks));
      const length = Number(parsed?.headers.get('content-length')?.[0] ?? NaN);
      if (parsed && Number.isFinite(length) && parsed.body.length >= length) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server may answer (413) and close while we are still writing: the answer is what counts.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (chunks.length > 0 || error.code === 'ECONNRESET' || error.code === 'EPIPE') finish();
      else finish(error);
    });
    socket.write(bytes);
  });
}

export function raw(port: number, request: RawRequest, timeoutMs = 5000): Promise<RawResponse> {
  return rawSend(port, requestBytes(request), timeoutMs);
}

export function basicValue(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`, 'utf8').toString('base64')}`;
}

// ---------------------------------------------------------------------------------------------
// Invariants

/**
 * The invariant of the whole suite: never a 5xx; an error is JSON with string `error` and `reason`
 * and `Content-Type: application/json`.
 */
export function assertCouchAnswer(res: RawResponse, context: string, method = 'GET'): void {
  assert.ok(res.status >= 200 && res.status < 500, `${context}: status ${res.status} ${res.text.slice(0, 300)}`);
  if (res.status < 400 || method === 'HEAD') return;
  assert.match(res.headers.get('content-type')?.[0] ?? '', /^application\/json/, `${context}: JSON error`);
  assert.ok(res.json !== null && typeof res.json === 'object' && !Array.isArray(res.json), `${context}: error body ${res.text.slice(0, 300)}`);
  assert.equal(typeof res.json.error, 'string', `${context}: error is a string`);
  assert.equal(typeof res.json.reason, 'string', `${context}: reason is a string`);
}

const GUARDED_PROTOTYPES: ReadonlyArray<readonly [string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Boolean.prototype', Boolean.prototype],
  ['Map.prototype', Map.prototype],
  ['Set.prototype', Set.prototype],
  ['Promise.prototype', Promise.prototype],
  ['Error.prototype', Error.prototype],
  ['RegExp.prototype', RegExp.prototype],
  ['Buffer.prototype', Buffer.prototype],
];

function describeObject(object: object): Map<PropertyKey, unknown> {
  const described = new Map<PropertyKey, unknown>();
  for (const key of Reflect.ownKeys(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, key)!;
    described.set(key, 'value' in descriptor ? descriptor.value : descriptor.get);
  }
  return described;
}

/**
 * Records the own members of the built-in prototypes; the returned check fails when any member was
 * added, removed or replaced since (prototype pollution), or when a fresh `{}` inherits a member
 * whose name a hostile body used.
 */
export function prototypeGuard(): () => void {
  const before = GUARDED_PROTOTYPES.map(([name, object]) => [name, describeObject(object)] as const);
  return () => {
    for (const [index, [name, snapshot]] of before.entries()) {
      const now = describeObject(GUARDED_PROTOTYPES[index]![1]);
      assert.deepEqual([...now.keys()].map(String).sort(), [...snapshot.keys()].map(String).sort(), `${name}: members added or removed`);
      for (const [key, value] of snapshot) assert.ok(now.get(key) === value, `${name}.${String(key)} was replaced`);
    }
    const fresh: Record<string, unknown> = {};
    for (const key of ['polluted', 'isAdmin', 'admin', 'roles', '_admin', 'x']) assert.equal(fresh[key], undefined, `{}.${key} is inherited`);
  };
}

/**
 * Records unhandled rejections and uncaught exceptions while it is installed: an in-process server
 * that crashed would otherwise take the test runner down or be missed.
 */
export function crashWatch(): { check: () => void; stop: () => void } {
  const seen: string[] = [];
  const onRejection = (reason: unknown): void => void seen.push(`unhandledRejection: ${(reason as Error)?.stack ?? String(reason)}`);
  const onException = (error: Error): void => void seen.push(`uncaughtException: ${error.stack ?? String(error)}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtExceptionMonitor', onException);
  return {
    check: () => assert.deepEqual(seen, [], 'no crash'),
    stop: () => {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtExceptionMonitor', onException);
    },
  };
}

/** No 500 path was taken: errorReply logs "unexpected error" for every non-CouchError. */
export function assertNoUnexpectedErrors(logs: readonly string[]): void {
  const unexpected = logs.filter((line) => line.includes('unexpected error'));
  assert.deepEqual(unexpected, [], 'no unexpected error was logged');
}

/** A server that answers `GET /` with 200 right now. */
export async function assertAlive(port: number, context = 'GET /'): Promise<void> {
  const res = await raw(port, { target: '/' }, 5000);
  assert.equal(res.status, 200, `${context}: ${res.text}`);
  assert.equal(res.json?.couchdb, 'Welcome');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ini text for hardening servers: cheap hashes, no lockout (its own tests switch it back on), and
 * live `_changes` feeds that end after 300 ms, so a generated `feed=continuous` is not a hang.
 */
export const HARDENING_INI = '[chttpd_auth]\niterations = 1000\n[chttpd_auth_lockout]\nmode = off\n[chttpd]\nchanges_timeout = 300\n';
