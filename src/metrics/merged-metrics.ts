/**
 * The numbers of every worker process as one node's (`_stats`, `_prometheus`): counters and gauges
 * summed with prom-client's `AggregatorRegistry.aggregate` (uptime: the largest), and CouchDB's
 * histograms recomputed from the samples of all workers, since percentiles cannot be summed. A
 * single process is merged the same way, from its own snapshot only.
 */
import { AggregatorRegistry, Summary, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import { summarise } from './sample-window.js';
import { statsTree, type TreeEntry } from './stats-tree.js';

/** One process's metrics: its registry's JSON and its histograms' samples (milliseconds) by summary name. */
export interface MetricsSnapshot {
  metrics: MetricObjectWithValues<MetricValue<string>>[];
  windows: Record<string, number[]>;
}

/** CouchDB's histograms: a Prometheus summary (seconds) and a `_stats` histogram (milliseconds) each. */
export const LATENCIES = [
  { name: 'couchdb_request_time_seconds', help: 'length of a request inside CouchDB without MochiWeb', path: ['couchdb', 'request_time'] },
  { name: 'divan_storage_write_time_seconds', help: 'length of a storage write, until durable', path: ['divan', 'storage', 'write_time'] },
] as const;

const PERCENTILES = [0.5, 0.75, 0.9, 0.95, 0.99, 0.999];

type Labels = Record<string, string | number>;

export class MergedMetrics {
  readonly #registry: Registry;
  readonly #windows = new Map<string, number[]>();

  constructor(snapshots: readonly MetricsSnapshot[]) {
    this.#registry = AggregatorRegistry.aggregate(snapshots.map((snapshot) => snapshot.metrics));
    for (const { name } of LATENCIES) this.#windows.set(name, snapshots.flatMap((snapshot) => snapshot.windows[name] ?? []));
  }

  /** The text exposition format (`Content-Type` in `contentType`); call once. */
  prometheus(): Promise<string> {
    // Built here only: replaying thousands of samples into a summary is the dearest part, and `_stats` does not need it.
    for (const { name, help } of LATENCIES) {
      const summary = new Summary({ name, help, percentiles: PERCENTILES, registers: [this.#registry] });
      for (const milliseconds of this.#windows.get(name) ?? []) summary.observe(milliseconds / 1000);
    }
    return this.#registry.metrics();
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** CouchDB's `_stats` tree of the same numbers. */
  async stats(): Promise<Record<string, unknown>> {
    const byName = new Map((await this.#registry.getMetricsAsJSON()).map((metric) => [metric.name, metric.values as { labels: Labels; value: number }[]]));
    const labelled = (name: string): [Labels, number][] => (byName.get(name) ?? []).map((entry) => [entry.labels, entry.value]);
    const single = (name: string): number => labelled(name)[0]?.[1] ?? 0;
    const caches = labelled('divan_cache_hits_total').map(([labels]) => String(labels['cache']));
    const cacheCount = (name: string, cache: string): number => labelled(name).find(([labels]) => labels['cache'] === cache)?.[1] ?? 0;
    const histogram = (index: 0 | 1): TreeEntry => ({ path: [...LATENCIES[index].path], type: 'histogram', desc: LATENCIES[index].help, value: summarise(this.#windows.get(LATENCIES[index].name) ?? []) });
    const entries: TreeEntry[] = [
      { path: ['couchdb', 'httpd', 'requests'], type: 'counter', desc: 'number of HTTP requests', value: single('couchdb_httpd_requests_total') },
      ...labelled('couchdb_httpd_request_methods').map(([labels, count]): TreeEntry => ({ path: ['couchdb', 'httpd_request_methods', String(labels['method'])], type: 'counter', desc: `number of HTTP ${String(labels['method'])} requests`, value: count })),
      ...labelled('couchdb_httpd_status_codes').map(([labels, count]): TreeEntry => ({ path: ['couchdb', 'httpd_status_codes', String(labels['code'])], type: 'counter', desc: `number of HTTP ${String(labels['code'])} responses`, value: count })),
      { path: ['couchdb', 'httpd', 'clients_requesting_changes'], type: 'counter', desc: 'number of clients for continuous _changes', value: single('couchdb_httpd_clients_requesting_changes') },
      histogram(0),
      { path: ['couchdb', 'database_reads'], type: 'counter', desc: 'number of times a document was read from a database', value: single('couchdb_database_reads_total') },
      { path: ['couchdb', 'database_writes'], type: 'counter', desc: 'number of times a database was changed', value: single('couchdb_database_writes_total') },
      { path: ['couchdb', 'auth_cache_hits'], type: 'counter', desc: 'number of authentication cache hits', value: cacheCount('divan_cache_hits_total', 'users') },
      { path: ['couchdb', 'auth_cache_misses'], type: 'counter', desc: 'number of authentication cache misses', value: cacheCount('divan_cache_misses_total', 'users') },
      // CouchDB 3.4's names: a password checked against the verified-password cache, or by PBKDF2.
      { path: ['couchdb', 'password_hashing_fast'], type: 'counter', desc: 'number of fast password hashing operations', value: cacheCount('divan_cache_hits_total', 'passwords') },
      { path: ['couchdb', 'password_hashing_slow'], type: 'counter', desc: 'number of slow password hashing operations', value: cacheCount('divan_cache_misses_total', 'passwords') },
      ...labelled('divan_auth_requests_total').map(([labels, count]): TreeEntry => ({ path: ['divan', 'auth', String(labels['method']), String(labels['outcome'])], type: 'counter', desc: `number of ${String(labels['method'])} authentications ending in ${String(labels['outcome'])}`, value: count })),
      ...caches.flatMap((cache): TreeEntry[] => [
        { path: ['divan', 'cache', cache, 'hits'], type: 'counter', desc: `number of ${cache} cache hits`, value: cacheCount('divan_cache_hits_total', cache) },
        { path: ['divan', 'cache', cache, 'misses'], type: 'counter', desc: `number of ${cache} cache misses`, value: cacheCount('divan_cache_misses_total', cache) },
      ]),
      histogram(1),
      { path: ['divan', 'js', 'memory_bytes'], type: 'gauge', desc: 'WebAssembly memory held by loaded design-document contexts', value: single('divan_js_sandbox_memory_bytes') },
      { path: ['divan', 'js', 'contexts'], type: 'gauge', desc: 'number of loaded design-document contexts', value: single('divan_js_sandbox_contexts') },
      { path: ['divan', 'js', 'evictions'], type: 'counter', desc: 'number of design-document contexts dropped as idle or over the memory bound', value: single('divan_js_sandbox_evictions_total') },
      { path: ['divan', 'js', 'busy_workers'], type: 'gauge', desc: 'number of sandbox workers running a job', value: single('divan_js_sandbox_busy_workers') },
      { path: ['divan', 'js', 'queued_jobs'], type: 'gauge', desc: 'number of sandbox jobs waiting for a worker', value: single('divan_js_sandbox_queued_jobs') },
      { path: ['divan', 'js', 'jobs'], type: 'counter', desc: 'number of sandbox jobs answered', value: single('divan_js_sandbox_jobs_total') },
      { path: ['divan', 'js', 'cancelled_jobs'], type: 'counter', desc: 'number of sandbox jobs dropped unrun because their client went away', value: single('divan_js_sandbox_cancelled_jobs_total') },
    ];
    return statsTree(entries);
  }
}
