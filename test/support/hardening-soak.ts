/**
 * The soak: a bounded mixed load on the real binary (logins, cookie and Basic requests, JWTs
 * reused and fresh, wrong passwords, document reads and writes, listings) for a fixed time, with
 * the server's resident memory sampled every second from /proc. No answer may be a 5xx or a
 * network error, and memory must show no growth trend once warmed up. Shared by
 * test/hardening/soak.test.ts (short) and bench/soak.ts (`npm run soak`, minutes).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startDivan } from './process.js';

export interface SoakOptions {
  durationMs: number;
  /** Excluded from the trend: caches fill and the heap finds its size first. */
  warmupMs: number;
  clients: number;
  users: number;
  seed: number;
  /** The bound of every cache the load fills (JWT tokens, lockout, verified passwords, users). */
  cacheSize: number;
  /** Extra environment for the server process (e.g. NODE_OPTIONS for a diagnosis). */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface SoakReport {
  durationMs: number;
  requests: number;
  /** Requests per operation. */
  operations: Record<string, number>;
  /** Answers per status code. */
  statuses: Record<string, number>;
  /** 5xx answers and network errors, first few. */
  failures: string[];
  failureCount: number;
  memory: {
    /** Resident set size in MiB: right after start, at the end of warm-up, at the end, the peak. */
    startMiB: number;
    afterWarmupMiB: number;
    endMiB: number;
    peakMiB: number;
    /** Least-squares slope of RSS after warm-up, MiB per minute. */
    slopeMiBPerMinute: number;
    /** Median of the last quarter of post-warm-up samples minus the median of the first quarter. */
    growthMiB: number;
    samples: number;
    /** [seconds, MiB], one sample per second. */
    series: Array<[number, number]>;
  } | undefined;
}

const ADMIN: [string, string] = ['soak-admin', 'soak-admin-pass'];
const JWT_KEY = randomBytes(32);

function rssMiB(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
}

function slopePerMinute(points: Array<[number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const [x, y] of points) {
    numerator += (x - meanX) * (y - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? 0 : (numerator / denominator) * 60_000;
}

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'divan-soak-'));
  const configFile = join(dir, 'soak.ini');
  writeFileSync(
    configFile,
    [
      '[admins]', `${ADMIN[0]} = ${ADMIN[1]}`,
      '[chttpd]', 'authentication_handlers = {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, jwt_authentication_handler}, {chttpd_auth, default_authentication_handler}',
      '[chttpd_auth]', 'iterations = 1000',
      '[jwt_keys]', `hmac:_default = ${JWT_KEY.toString('base64')}`,
      // Every cache the load fills is bounded; small bounds fill during the warm-up, so what still
      // grows afterwards is a structure without a bound.
      '[jwt_auth]', `token_cache_size = ${options.cacheSize}`,
      '[chttpd_auth_lockout]', `max_objects = ${options.cacheSize}`,
      '[couch_passwords_cache]', `max_objects = ${options.cacheSize}`,
      '[chttpd_auth_cache]', `max_objects = ${options.cacheSize}`,
      '[log]', 'level = warning', '',
    ].join('\n'),
  );
  const node = await startDivan(['--port', '0', '--data', dir, '--config', configFile], options.env);
  const pid = node.child.pid!;
  const startMiB = rssMiB(pid);
  const base = new URL(node.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const next = random(options.seed);
  const operations: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const failures: string[] = [];
  let failureCount = 0;
  let requests = 0;

  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const req = httpRequest(
        { host: base.hostname, port: base.port, path, method, agent, headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length), ...headers } : headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      // A hang detector, not a latency bound: wide enough for a busy machine (issue 32 item 16).
      req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
      req.on('error', reject);
      req.end(payload);
    });
  const basic = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
  const adminAuth = { Authorization: basic(...ADMIN) };

  try {
    if ((await call('PUT', '/soak', adminAuth)).status !== 201) throw new Error('cannot create the soak database');
    for (let u = 0; u < options.users; u++) {
      const res = await call('PUT', `/_users/org.couchdb.user:u${u}`, adminAuth, { name: `u${u}`, password: `pw${u}`, roles: ['soak'], type: 'user' });
      if (res.status !== 201) throw new Error(`cannot create user u${u}: ${res.status} ${res.text}`);
    }
    // Readers of the soak database: its members are the soak role.
    await call('PUT', '/soak/_security', adminAuth, { admins: { names: [], roles: [] }, members: { names: [], roles: ['soak'] } });

    const b64 = (text: string): string => Buffer.from(text).toString('base64url');
    const jwt = (sub: string, unique: boolean): string => {
      // A fresh token (unique jti) is a new entry for the verified-token cache every time.
      const claims = { sub, exp: Math.floor(Date.now() / 1000) + 3600, '_couchdb.roles': ['soak'], ...(unique ? { jti: randomBytes(8).toString('hex') } : {}) };
      const input = `${b64('{"alg":"HS256"}')}.${b64(JSON.stringify(claims))}`;
      return `${input}.${createHmac('sha256', JWT_KEY).update(input).digest('base64url')}`;
    };
    const sharedTokens = Array.from({ length: options.users }, (_, u) => jwt(`u${u}`, false));
    const cookies = new Map<number, string>();
    // Each document takes at most 20 updates, then a new one replaces it in the working set: its
    // history stops growing, so the load is stationary (a revision history is data, not a leak).
    const docs: Array<{ id: string; rev: string; updates: number }> = [];
    let written = 0;

    const ops: Array<[string, number, () => Promise<Answer>]> = [
      ['login', 6, async () => {
        const u = Math.floor(next() * options.users);
        const res = await call('POST', '/_session', {}, { name: `u${u}`, password: `pw${u}` });
        const cookie = [res.headers['set-cookie']].flat()[0];
        if (res.status === 200 && cookie) cookies.set(u, cookie.split(';')[0]!);
        return res;
      }],
      ['cookie', 20, async () => {
        const entries = [...cookies.values()];
        const cookie = entries[Math.floor(next() * entries.length)];
        return call('GET', cookie ? '/soak/_all_docs?limit=5' : '/_session', cookie ? { Cookie: cookie } : {});
      }],
      ['basic', 15, async () => {
        const u = Math.floor(next() * options.users);
        return call('GET', '/_session', { Authorization: basic(`u${u}`, `pw${u}`) });
      }],
      ['wrong password', 3, async () => {
        const u = Math.floor(next() * options.users);
        return call('GET', '/_session', { Authorization: basic(`u${u}`, `nope-${Math.floor(next() * 1e9)}`), 'X-Forwarded-For': `10.${Math.floor(next() * 255)}.${Math.floor(next() * 255)}.1` });
      }],
      ['jwt reused', 10, async () => call('GET', '/_session', { Authorization: `Bearer ${sharedTokens[Math.floor(next() * sharedTokens.length)]}` })],
      ['jwt fresh', 6, async () => call('GET', '/soak', { Authorization: `Bearer ${jwt(`u${Math.floor(next() * options.users)}`, true)}` })],
      ['doc write', 12, async () => {
        const update = docs.length > 0 && next() < 0.4;
        const index = Math.floor(next() * docs.length);
        if (update && docs[index]!.updates < 20) {
          const doc = docs[index]!;
          const res = await call('PUT', `/soak/${doc.id}`, adminAuth, { _rev: doc.rev, n: written++, pad: 'y'.repeat(200) });
          if (res.status === 201) docs[index] = { id: doc.id, rev: (JSON.parse(res.text) as { rev: string }).rev, updates: doc.updates + 1 };
          return res;
        }
        const id = `d${written++}`;
        const res = await call('PUT', `/soak/${id}`, adminAuth, { n: written, pad: 'x'.repeat(Math.floor(next() * 1000)) });
        if (res.status === 201) {
          const entry = { id, rev: (JSON.parse(res.text) as { rev: string }).rev, updates: 0 };
          if (docs.length < 5000) docs.push(entry);
          else if (update) docs[index] = entry;
        }
        return res;
      }],
      ['doc read', 20, async () => {
        const doc = docs[Math.floor(next() * docs.length)];
        return call('GET', doc ? `/soak/${doc.id}` : '/soak', adminAuth);
      }],
      ['welcome', 3, async () => call('GET', '/')],
    ];
    const totalWeight = ops.reduce((sum, [, weight]) => sum + weight, 0);
    const pick = (): [string, () => Promise<Answer>] => {
      let roll = next() * totalWeight;
      for (const [name, weight, run] of ops) {
        roll -= weight;
        if (roll < 0) return [name, run];
      }
      return [ops[0]![0], ops[0]![2]];
    };

    const started = Date.now();
    const samples: Array<[number, number]> = [];
    const sampler = setInterval(() => {
      const rss = rssMiB(pid);
      if (rss !== undefined) samples.push([Date.now() - started, rss]);
    }, 1000);
    let lastReport = started;
    const client = async (): Promise<void> => {
      while (Date.now() - started < options.durationMs) {
        const [name, run] = pick();
        operations[name] = (operations[name] ?? 0) + 1;
        requests++;
        try {
          const res = await run();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status >= 500) {
            failureCount++;
            if (failures.length < 10) failures.push(`${name}: ${res.status} ${res.text.slice(0, 200)}`);
          }
        } catch (error) {
          failureCount++;
          if (failures.length < 10) failures.push(`${name}: ${(error as Error).message}`);
        }
        if (Date.now() - lastReport > 30_000) {
          lastReport = Date.now();
          log(`soak: ${Math.round((Date.now() - started) / 1000)} s, ${requests} requests, rss ${samples.at(-1)?.[1].toFixed(1) ?? '?'} MiB`);
        }
      }
    };
    await Promise.all(Array.from({ length: options.clients }, () => client()));
    clearInterval(sampler);
    const durationMs = Date.now() - started;

    let memory: SoakReport['memory'];
    const after = samples.filter(([t]) => t >= options.warmupMs);
    if (startMiB !== undefined && after.length >= 4) {
      const quarter = Math.max(1, Math.floor(after.length / 4));
      memory = {
        startMiB,
        afterWarmupMiB: after[0]![1],
        endMiB: samples.at(-1)![1],
        peakMiB: Math.max(...samples.map(([, rss]) => rss)),
        slopeMiBPerMinute: slopePerMinute(after),
        growthMiB: median(after.slice(-quarter).map(([, rss]) => rss)) - median(after.slice(0, quarter).map(([, rss]) => rss)),
        samples: samples.length,
        series: samples.map(([t, rss]) => [Math.round(t / 1000), Math.round(rss * 10) / 10]),
      };
    }
    return { durationMs, requests, operations, statuses, failures, failureCount, memory };
  } finally {
    agent.destroy();
    await node.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The verdict on memory: no growth trend after warm-up, with a tolerance for GC noise. */
export function memoryProblems(memory: NonNullable<SoakReport['memory']>, durationMs: number, warmupMs: number): string[] {
  const problems: string[] = [];
  const minutes = Math.max(0.25, (durationMs - warmupMs) / 60_000);
  // A leak of a few hundred bytes per request grows tens of MiB over minutes at these rates;
  // GC sawtooth on a heap of this size stays within a few MiB either way.
  const allowed = Math.max(24, memory.afterWarmupMiB * 0.25);
  if (memory.growthMiB > allowed) problems.push(`RSS grew by ${memory.growthMiB.toFixed(1)} MiB after warm-up (allowed ${allowed.toFixed(1)})`);
  if (memory.slopeMiBPerMinute * minutes > allowed) {
    problems.push(`RSS trend ${memory.slopeMiBPerMinute.toFixed(2)} MiB/min × ${minutes.toFixed(1)} min exceeds ${allowed.toFixed(1)} MiB`);
  }
  return problems;
}
