import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { request, type HttpOptions, type HttpResponse } from './http.js';

/** Whether a process is one of the heavy lane's (its environment names the role: docs/workers.md). */
function isLane(pid: string): boolean {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes('DIVAN_LANE_ROLE=heavy');
}

/** The pids of a process's children (Linux /proc): the serving workers of a primary, or with `lanes` its heavy-lane processes. */
export function childPids(parent: number, { lanes = false } = {}): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/PID/stat is the parent pid; the command name (field 2) may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent && fields[0] !== 'Z' && isLane(entry) === lanes) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids.sort((a, b) => a - b);
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The same request `count` times, one after another, each on a fresh connection. */
export async function requestsFrom(url: string, path: string, options: HttpOptions, count: number): Promise<HttpResponse[]> {
  const responses: HttpResponse[] = [];
  for (let i = 0; i < count; i++) responses.push(await request(url, path, options));
  return responses;
}

/** Polls `probe` every 50 ms until it holds; fails after `limitMs` (wide: a busy machine is slow). */
export async function untilTrue(probe: () => Promise<boolean>, limitMs = 30000): Promise<void> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > limitMs) throw new Error(`not true within ${limitMs} ms`);
    await new Promise((wait) => setTimeout(wait, 50));
  }
}

/** `promise`, or a rejection after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A kept-alive connection to one worker process, named by its request-id prefix. */
export interface PinnedClient {
  prefix: string;
  request(path: string, options?: HttpOptions): Promise<HttpResponse>;
  close(): void;
}

const prefixOf = (res: HttpResponse): string => String(res.headers['x-couch-request-id']).slice(0, 6);

/**
 * One kept-alive connection to each of `workers` worker processes (round robin hands new
 * connections out in turn), so a test chooses which worker answers. The server's
 * `keepalive_timeout` must outlast the test. Every answer is checked to come from the same worker.
 */
export async function pinnedToEachWorker(url: string, workers: number): Promise<PinnedClient[]> {
  const pinned = new Map<string, PinnedClient>();
  for (let attempt = 0; pinned.size < workers; attempt++) {
    if (attempt > 20) throw new Error(`only ${pinned.size} of ${workers} workers reached`);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const prefix = prefixOf(await request(url, '/', { agent }));
    if (pinned.has(prefix)) {
      agent.destroy();
      continue;
    }
    pinned.set(prefix, {
      prefix,
      async request(path, options = {}) {
        const res = await request(url, path, { ...options, agent });
        if (prefixOf(res) !== prefix) throw new Error(`answered by ${prefixOf(res)}, not ${prefix}: the connection was not kept`);
        return res;
      },
      close: () => agent.destroy(),
    });
  }
  return [...pinned.values()];
}
