/**
 * What the benchmarks share: starting a server process and waiting for its "listening" line, one
 * plain HTTP call, one autocannon load with the figures the reports use, and a PostgreSQL schema per run.
 */
import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import pg from 'pg';

export interface Running {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `node ARGS`, or `LAUNCHER… node ARGS` (valgrind) when a launcher is given. */
export function startProcess(args: string[], env: Record<string, string>, ready: RegExp, launcher: string[] = []): Promise<Running> {
  const [command, ...rest] = [...launcher, process.execPath, ...args] as [string, ...string[]];
  const child: ChildProcess = spawn(command, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolveStart, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = ready.exec(out);
      if (match) {
        resolveStart({
          url: match[1]!.replace(/\/$/, ''),
          pid: child.pid!,
          stop: () => new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${out}`)));
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function call(base: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolveCall, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolveCall({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}


export interface Measurement {
  rps: number;
  /** Requests answered in all. */
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function load(options: autocannon.Options): Promise<Measurement> {
  const result = await autocannon(options);
  return { rps: result.requests.average, requests: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}


/**
 * A PostgreSQL schema of its own for one bench run (`--storage postgres`): the `[divan]` lines that
 * select it, and its removal once the server has stopped, so runs leave nothing behind.
 */
export function postgresBenchSchema(bench: string, url = 'postgresql://postgres@127.0.0.1:5432/test'): { ini: string; drop(): Promise<void> } {
  const schema = `bench_${bench}_${process.pid}`;
  return {
    ini: `[divan]\nstorage = postgres\npostgres_url = ${url}\npostgres_schema = ${schema}\n`,
    async drop(): Promise<void> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** CPU seconds (user + system) of a process and its descendants, the reaped ones included; 0 off Linux. */
export function cpuSeconds(root: number): number {
  const stats = new Map<number, string[]>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // Fields after the command, which may hold spaces: state is [0], ppid [1], utime [11] … cstime [14].
        const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
        stats.set(Number(entry), text.slice(text.lastIndexOf(')') + 2).split(' '));
      } catch {
        // The process ended while the list was read.
      }
    }
  } catch {
    return 0;
  }
  let ticks = 0;
  const walk = (pid: number): void => {
    const fields = stats.get(pid);
    if (fields === undefined) return;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    for (const [child, other] of stats) if (Number(other[1]) === pid) walk(child);
  };
  walk(root);
  return ticks / 100;
}

/** The process listening on a local port (`ss`, Linux), for its CPU time; undefined when not found. */
export function listeningPid(port: string): number | undefined {
  try {
    const match = /pid=(\d+)/.exec(execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' }));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
