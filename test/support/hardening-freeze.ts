/**
 * The under-load check: while one client sends a request that once froze the server for everybody,
 * another client asks `GET /_up` back to back; the latencies it sees are the verdict. Shared by
 * test/hardening/freeze.test.ts and bench/soak.ts (`npm run soak`). Each scenario runs on a fresh
 * database of one real binary.
 *
 * Two verdicts: `freezeProblems` holds the security issue's figure (p99 within 100 ms) and is the
 * soak's, run on a quiet machine; `stallProblems` is the test suite's, which must pass however busy
 * the machine is (issue 32 item 16): the longest `/_up` wait is compared with a wide floor, with the
 * request's own run and with `/_up` measured just before on the same server, so a loaded machine
 * slows them alike while a request that holds the event loop for its whole run still fails it.
 *
 * A new scenario is one more entry of `FREEZE_SCENARIOS`: how to prepare it and the request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startDivan } from './process.js';

/** One request to the server under test, as the admin; resolves with status and body text. */
export type AdminCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; text: string }>;

export interface FreezeScenario {
  name: string;
  /** Prepares the database `db` (it exists, empty) for the request. */
  setup?: (call: AdminCall, db: string) => Promise<void>;
  /** The request sent while `/_up` is probed. */
  request: (db: string) => { method: string; path: string; body?: unknown };
}

const rev = (n: number): string => `1-${n.toString(16).padStart(32, '0')}`;

export const FREEZE_SCENARIOS: FreezeScenario[] = [
  {
    // Issue item 1: every revision was merged into a fresh copy of the whole tree (O(N²)).
    name: '_bulk_docs new_edits=false, 4000 conflicting revisions of one id',
    request: (db) => ({
      method: 'POST',
      path: `/${db}/_bulk_docs`,
      body: { new_edits: false, docs: Array.from({ length: 4000 }, (_, i) => ({ _id: 'x', _rev: rev(i), v: i })) },
    }),
  },
  {
    // Issue item 1: the whole batch was prepared and written in one turn of the event loop.
    name: '_bulk_docs of 100 000 new documents',
    request: (db) => ({
      method: 'POST',
      path: `/${db}/_bulk_docs`,
      body: { docs: Array.from({ length: 100_000 }, (_, i) => ({ _id: `d${i}`, v: i })) },
    }),
  },
  {
    // Issue item 2: a catastrophic-backtracking $regex in a _changes selector (each two more
    // characters multiply the time by four).
    name: '_changes?filter=_selector with $regex ^(a+)+$ over 28 characters',
    setup: async (call, db) => {
      const res = await call('PUT', `/${db}/victim`, { v: `${'a'.repeat(28)}!` });
      if (res.status !== 201) throw new Error(`cannot write the regex victim: ${res.status} ${res.text}`);
    },
    request: (db) => ({ method: 'POST', path: `/${db}/_changes?filter=_selector`, body: { selector: { v: { $regex: '^(a+)+$' } } } }),
  },
];

export interface FreezeReport {
  scenario: string;
  /** Status and duration of the scenario's request. */
  status: number;
  requestMs: number;
  /** `GET /_up` latencies while it ran, in ms. */
  probes: number;
  p50: number;
  p99: number;
  max: number;
  /** Probes that failed (network error or non-200). */
  probeFailures: number;
  /** `GET /_up` p99 on the same server just before the scenario, with nothing else running, in ms. */
  idleP99: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const ADMIN = 'freeze-admin:freeze-pass';
/** `GET /_up` probes measured before each scenario, with nothing else running. */
const IDLE_PROBES = 50;
/**
 * The test suite's bounds on the longest `/_up` wait, the largest of three. A floor ten times the
 * issue's 100 ms: a machine busy with other work delays a probe by scheduling slices and
 * collections (up to about 1.6 s seen under two CPU hogs on two cores), not by many seconds. A
 * share of the request's own run: a request that does not yield holds the probes for nearly all of
 * it, however fast the machine (the scenarios below held them for seconds to minutes before their
 * fixes). A multiple of the idle p99, for a machine so busy that even idle probes are slow.
 */
const STALL_FLOOR_MS = 1000;
const STALL_SHARE_OF_REQUEST = 0.25;
const STALL_IDLE_RATIO = 50;

/** Runs `scenarios` one after the other on one real binary and reports `/_up` as another client saw it. */
export async function runFreezeCheck(scenarios: FreezeScenario[], log: (line: string) => void = () => undefined): Promise<FreezeReport[]> {
  const dir = mkdtempSync(join(tmpdir(), 'divan-freeze-'));
  const configFile = join(dir, 'freeze.ini');
  writeFileSync(configFile, `[admins]\n${ADMIN.replace(':', ' = ')}\n[log]\nlevel = warning\n`);
  const node = await startDivan(['--port', '0', '--data', dir, '--config', configFile]);
  const base = new URL(node.url);
  // Two clients: the prober has its own connection, as another user would.
  const senderAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const proberAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call = (agent: Agent, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string> = { Authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` };
      if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
      const req = httpRequest({ host: base.hostname, port: base.port, path, method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(120_000, () => req.destroy(new Error('no answer within 120 s')));
      req.on('error', reject);
      req.end(payload);
    });
  const admin: AdminCall = (method, path, body) => call(senderAgent, method, path, body);
  /** `GET /_up` back to back on the prober's connection until `stop(probes so far)`: every latency, and the failures. */
  const probe = async (stop: (count: number) => boolean): Promise<{ latencies: number[]; probeFailures: number }> => {
    const latencies: number[] = [];
    let probeFailures = 0;
    do {
      const started = performance.now();
      try {
        const res = await call(proberAgent, 'GET', '/_up');
        if (res.status !== 200) probeFailures++;
      } catch {
        probeFailures++;
      }
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 2));
    } while (!stop(latencies.length));
    return { latencies, probeFailures };
  };

  const reports: FreezeReport[] = [];
  try {
    for (const [index, scenario] of scenarios.entries()) {
      const db = `freeze${index}`;
      if ((await admin('PUT', `/${db}`)).status !== 201) throw new Error(`cannot create ${db}`);
      await scenario.setup?.(admin, db);
      const { method, path, body } = scenario.request(db);
      const idle = (await probe((count) => count >= IDLE_PROBES)).latencies.sort((a, b) => a - b);

      let done = false;
      const prober = probe(() => done);
      const started = performance.now();
      const answer = await admin(method, path, body).catch((error: Error) => ({ status: 0, text: error.message }));
      const requestMs = performance.now() - started;
      done = true;
      const { latencies, probeFailures } = await prober;

      const sorted = [...latencies].sort((a, b) => a - b);
      const report: FreezeReport = {
        scenario: scenario.name,
        status: answer.status,
        requestMs,
        probes: sorted.length,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.at(-1) ?? 0,
        probeFailures,
        idleP99: percentile(idle, 0.99),
      };
      log(describeFreeze(report));
      reports.push(report);
    }
    return reports;
  } finally {
    senderAgent.destroy();
    proberAgent.destroy();
    await node.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

export function describeFreeze(report: FreezeReport): string {
  const ms = (value: number): string => value.toFixed(1);
  return (
    `${report.scenario}: answered ${report.status} in ${ms(report.requestMs)} ms; ` +
    `GET /_up meanwhile: ${report.probes} probes, p50 ${ms(report.p50)} ms, p99 ${ms(report.p99)} ms, max ${ms(report.max)} ms ` +
    `(idle p99 ${ms(report.idleP99)} ms)` +
    (report.probeFailures > 0 ? `, ${report.probeFailures} failed` : '')
  );
}

/** The verdict: `/_up` answered every probe, within `p99Ms` at the 99th percentile. */
export function freezeProblems(report: FreezeReport, p99Ms = 100): string[] {
  const problems: string[] = [];
  if (report.probeFailures > 0) problems.push(`${report.scenario}: ${report.probeFailures} /_up probes failed`);
  if (report.p99 > p99Ms) problems.push(`${report.scenario}: /_up p99 ${report.p99.toFixed(1)} ms > ${p99Ms} ms`);
  return problems;
}

/**
 * The test suite's verdict, independent of how busy the machine is: every probe answered, and the
 * longest wait within the largest of STALL_FLOOR_MS, STALL_SHARE_OF_REQUEST of the request's run
 * and STALL_IDLE_RATIO × the idle p99.
 */
export function stallProblems(report: FreezeReport): string[] {
  const bound = Math.max(STALL_FLOOR_MS, STALL_SHARE_OF_REQUEST * report.requestMs, STALL_IDLE_RATIO * report.idleP99);
  const problems: string[] = [];
  if (report.probeFailures > 0) problems.push(`${report.scenario}: ${report.probeFailures} /_up probes failed`);
  if (report.max > bound) problems.push(`${report.scenario}: /_up waited ${report.max.toFixed(1)} ms > ${bound.toFixed(1)} ms (idle p99 ${report.idleP99.toFixed(1)} ms)`);
  return problems;
}
