/**
 * The node's metrics over every worker process (gather.ts): each answers its snapshot, the asker
 * merges them (merged-metrics.ts). `_system` is summed the same way: the node's memory is that of
 * all its processes, its uptime the oldest one's.
 */
import { resourceUsage } from 'node:process';
import type { Gather } from './gather.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Metrics } from '../metrics/metrics.js';
import { MergedMetrics, type MetricsSnapshot } from '../metrics/merged-metrics.js';

export const METRICS = 'metrics';
const SYSTEM = 'system';

export function shareMetrics(metrics: Metrics, gather: Gather): void {
  gather.answer(METRICS, async () => (await metrics.snapshot()) as unknown as Json);
  gather.answer(SYSTEM, () => processSystem(metrics.uptimeSeconds()));
}

export async function nodeMetrics(gather: Gather): Promise<MergedMetrics> {
  return new MergedMetrics((await gather.gather(METRICS)).map((reply) => reply.value as unknown as MetricsSnapshot));
}

export async function nodeSystem(gather: Gather): Promise<JsonObject> {
  const systems = (await gather.gather(SYSTEM)).map((reply) => reply.value as JsonObject);
  const merged = systems.reduce<JsonObject>((total, each) => addNumbers(total, each) as JsonObject, {});
  return { ...merged, uptime: Math.max(0, ...systems.map((each) => Number(each['uptime']))) };
}

type Counter = { name: string; type: string; values: { labels: Record<string, string | number>; value: number }[] };

/**
 * A departed worker's counters added to those of the workers that departed before it (kept-answers.ts).
 * Gauges and latency samples describe a live process, so they leave with it.
 */
export function foldDepartedCounters(kept: Json | undefined, departed: Json): Json {
  const counters = (snapshot: Json | undefined): Counter[] =>
    ((snapshot as unknown as MetricsSnapshot | undefined)?.metrics ?? []).filter((metric) => (metric.type as unknown as string) === 'counter') as unknown as Counter[];
  const byName = new Map<string, Counter>();
  for (const metric of [...counters(kept), ...counters(departed)]) {
    const total = byName.get(metric.name) ?? byName.set(metric.name, { ...metric, values: [] }).get(metric.name)!;
    for (const { labels, value } of metric.values) {
      const same = total.values.find((each) => sameLabels(each.labels, labels));
      if (same) same.value += value;
      else total.values.push({ labels, value });
    }
  }
  return { metrics: [...byName.values()], windows: {} } as unknown as Json;
}

function sameLabels(a: Record<string, string | number>, b: Record<string, string | number>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** `a` and `b` with their numbers added, leaf by leaf. */
function addNumbers(a: Json | undefined, b: Json): Json {
  if (typeof b === 'number') return (typeof a === 'number' ? a : 0) + b;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return b;
  const base = a !== null && typeof a === 'object' && !Array.isArray(a) ? a : {};
  return Object.fromEntries([...new Set([...Object.keys(base), ...Object.keys(b)])].map((key) => [key, key in b ? addNumbers(base[key], b[key]!) : base[key]!]));
}

/**
 * One process in CouchDB's `_system` shape, filled from Node's process where a value has a
 * meaning here (memory, uptime, context switches, I/O); Erlang-only counters are 0.
 */
function processSystem(uptime: number): JsonObject {
  const memory = process.memoryUsage();
  const usage = resourceUsage();
  return {
    uptime,
    memory: {
      other: Math.max(0, memory.rss - memory.heapTotal - memory.external),
      atom: 0,
      atom_used: 0,
      processes: memory.heapTotal,
      processes_used: memory.heapUsed,
      binary: memory.arrayBuffers,
      code: Math.max(0, memory.external - memory.arrayBuffers),
      ets: 0,
    },
    run_queue: 0,
    run_queue_dirty_cpu: 0,
    ets_table_count: 0,
    context_switches: usage.voluntaryContextSwitches + usage.involuntaryContextSwitches,
    reductions: 0,
    garbage_collection_count: 0,
    words_reclaimed: 0,
    io_input: usage.fsRead,
    io_output: usage.fsWrite,
    os_proc_count: 0,
    stale_proc_count: 0,
    process_count: 1,
    process_limit: 1,
    message_queues: {},
    internal_replication_jobs: 0,
    distribution: {},
    node: { rss: memory.rss, heap_total: memory.heapTotal, heap_used: memory.heapUsed, external: memory.external, user_cpu_us: usage.userCPUTime, system_cpu_us: usage.systemCPUTime },
  };
}
