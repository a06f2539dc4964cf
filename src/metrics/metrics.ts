/**
 * This process's metrics: counters and gauges in one prom-client registry, and the samples of
 * CouchDB's histograms. `snapshot()` hands them to merged-metrics.ts, which renders the Prometheus
 * scrape and `GET /_node/_local/_stats` (CouchDB's tree) from the snapshots of every worker process.
 * A leaf module: the layers that count (the request pipeline, the authentication chain's handlers,
 * the database layer) are given the `Metrics` object, or the small `AuthOutcomes` view of it.
 */
import { Counter, Gauge, Registry, type Aggregator } from 'prom-client';
import { AUTH_METHODS, AUTH_OUTCOMES, type AuthMethod, type AuthOutcome, type AuthOutcomes } from './auth-outcomes.js';
import type { HitCounts } from './hit-counts.js';
import { SampleWindow } from './sample-window.js';
import { LATENCIES, type MetricsSnapshot } from './merged-metrics.js';

const METHODS = ['COPY', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
const STATUS_CODES = [200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 414, 415, 416, 417, 500, 501, 503];
/** A counter whose value is read from elsewhere when scraped (cache counts, uptime). */
function readCounter(registry: Registry, name: string, help: string, labelNames: string[], read: () => [Record<string, string | number>, number][], aggregator: Aggregator = 'sum'): Counter<string> {
  return new Counter({
    name,
    help,
    labelNames,
    aggregator,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.inc(labels, value);
    },
  });
}

/**
 * What the JavaScript sandbox holds: its contexts' memory, how many, and how many were evicted so
 * far; and its work: workers busy, jobs waiting, jobs answered, jobs dropped unrun (client gone).
 */
interface SandboxMemory {
  readonly bytes: number;
  readonly contexts: number;
  readonly evictions: number;
  readonly busy: number;
  readonly queued: number;
  readonly jobs: number;
  readonly cancelled: number;
}

/** A gauge whose value is read from elsewhere when scraped (the sandbox's memory). */
function readGauge(registry: Registry, name: string, help: string, read: () => [Record<string, string | number>, number][]): Gauge<string> {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.set(labels, value);
    },
  });
}

export class Metrics implements AuthOutcomes {
  readonly registry = new Registry();
  readonly #started: number;
  readonly #caches = new Map<string, HitCounts>();
  #authCache: HitCounts | undefined;
  #sandbox: (() => SandboxMemory) | undefined;
  /**
   * The per-request counts are plain numbers, handed to prom-client only when scraped: its
   * `inc(labels)` hashes the label object on every call. Insertion order is the order of the
   * scrape's values, as when prom-client held them.
   */
  #requests = 0;
  readonly #methods = new Map<string, number>(METHODS.map((method) => [method, 0]));
  readonly #codes = new Map<number, number>(STATUS_CODES.map((code) => [code, 0]));
  readonly #auth = new Map<AuthMethod, Map<AuthOutcome, number>>(AUTH_METHODS.map((method) => [method, new Map(AUTH_OUTCOMES.map((outcome) => [outcome, 0]))]));
  readonly #reads: Counter<string>;
  readonly #writes: Counter<string>;
  readonly #feeds: Gauge<string>;
  /** The samples of CouchDB's histograms, by the name of their Prometheus summary (merged-metrics.ts). */
  readonly #requestTime: SampleWindow;
  readonly #storageWrite: SampleWindow;

  constructor(windowSeconds: () => number, started: number = Date.now()) {
    const registers = [this.registry];
    this.#started = started;
    readCounter(this.registry, 'couchdb_httpd_requests_total', 'number of HTTP requests', [], () => [[{}, this.#requests]]);
    readCounter(this.registry, 'couchdb_httpd_request_methods', 'number of HTTP requests by method', ['method'], () => [...this.#methods].map(([method, value]) => [{ method }, value]));
    readCounter(this.registry, 'couchdb_httpd_status_codes', 'number of HTTP responses by status code', ['code'], () => [...this.#codes].map(([code, value]) => [{ code }, value]));
    this.#reads = new Counter({ name: 'couchdb_database_reads_total', help: 'number of times a document was read from a database', registers });
    this.#writes = new Counter({ name: 'couchdb_database_writes_total', help: 'number of times a database was changed', registers });
    this.#feeds = new Gauge({ name: 'couchdb_httpd_clients_requesting_changes', help: 'number of clients for continuous _changes', registers });
    readCounter(this.registry, 'divan_auth_requests_total', 'authentication attempts by method and outcome', ['method', 'outcome'], () =>
      [...this.#auth].flatMap(([method, outcomes]) => [...outcomes].map(([outcome, value]): [Record<string, string | number>, number] => [{ method, outcome }, value])),
    );
    this.#requestTime = new SampleWindow(() => windowSeconds() * 1000);
    this.#storageWrite = new SampleWindow(() => windowSeconds() * 1000);
    // The oldest worker's uptime is the server's, not the sum of all.
    readCounter(this.registry, 'couchdb_uptime_seconds', 'couchdb uptime', [], () => [[{}, this.uptimeSeconds()]], 'max');
    readCounter(this.registry, 'couchdb_auth_cache_requests_total', 'number of authentication cache requests', [], () => (this.#authCache ? [[{}, this.#authCache.hits + this.#authCache.misses]] : []));
    readCounter(this.registry, 'couchdb_auth_cache_misses_total', 'number of authentication cache misses', [], () => (this.#authCache ? [[{}, this.#authCache.misses]] : []));
    readCounter(this.registry, 'divan_cache_hits_total', 'cache hits by cache', ['cache'], () => [...this.#caches].map(([cache, counts]) => [{ cache }, counts.hits]));
    readCounter(this.registry, 'divan_cache_misses_total', 'cache misses by cache', ['cache'], () => [...this.#caches].map(([cache, counts]) => [{ cache }, counts.misses]));
    const sandbox = (read: (held: SandboxMemory) => number) => (): [Record<string, string | number>, number][] => (this.#sandbox ? [[{}, read(this.#sandbox())]] : []);
    readGauge(this.registry, 'divan_js_sandbox_memory_bytes', 'WebAssembly memory held by loaded design-document contexts', sandbox((held) => held.bytes));
    readGauge(this.registry, 'divan_js_sandbox_contexts', 'number of loaded design-document contexts', sandbox((held) => held.contexts));
    readCounter(this.registry, 'divan_js_sandbox_evictions_total', 'number of design-document contexts dropped as idle or over the memory bound', [], sandbox((held) => held.evictions));
    readGauge(this.registry, 'divan_js_sandbox_busy_workers', 'number of sandbox workers running a job', sandbox((held) => held.busy));
    readGauge(this.registry, 'divan_js_sandbox_queued_jobs', 'number of sandbox jobs waiting for a worker', sandbox((held) => held.queued));
    readCounter(this.registry, 'divan_js_sandbox_jobs_total', 'number of sandbox jobs answered', [], sandbox((held) => held.jobs));
    readCounter(this.registry, 'divan_js_sandbox_cancelled_jobs_total', 'number of sandbox jobs dropped unrun because their client went away', [], sandbox((held) => held.cancelled));
  }

  /** The JavaScript sandbox's memory, read when scraped. */
  watchSandbox(read: () => SandboxMemory): void {
    this.#sandbox = read;
  }

  /** One HTTP request answered: its method, status and time inside Divan. */
  request(method: string, status: number, milliseconds: number): void {
    this.#requests++;
    this.#methods.set(method, (this.#methods.get(method) ?? 0) + 1);
    this.#codes.set(status, (this.#codes.get(status) ?? 0) + 1);
    this.#requestTime.add(milliseconds);
  }

  documentsRead(count = 1): void {
    if (count > 0) this.#reads.inc(count);
  }

  documentsWritten(count = 1): void {
    if (count > 0) this.#writes.inc(count);
  }

  authOutcome(method: AuthMethod, outcome: AuthOutcome): void {
    const outcomes = this.#auth.get(method)!;
    outcomes.set(outcome, outcomes.get(outcome)! + 1);
  }

  /** A `_changes` feed that stays open (continuous, longpoll, eventsource); call the answer when it ends. */
  changesFeedOpened(): () => void {
    this.#feeds.inc();
    let open = true;
    return () => {
      if (open) this.#feeds.dec();
      open = false;
    };
  }

  storageWrite(milliseconds: number): void {
    this.#storageWrite.add(milliseconds);
  }

  /** The cache of `_users` credentials: CouchDB's `auth_cache_hits` and `auth_cache_misses`. */
  watchAuthCache(counts: HitCounts): void {
    this.#authCache = counts;
    this.watchCache('users', counts);
  }

  watchCache(name: string, counts: HitCounts): void {
    this.#caches.set(name, counts);
  }

  uptimeSeconds(): number {
    return Math.floor((Date.now() - this.#started) / 1000);
  }

  /** This process's numbers, as other workers' are merged with them (merged-metrics.ts). */
  async snapshot(): Promise<MetricsSnapshot> {
    const [requestTime, storageWrite] = LATENCIES;
    return {
      metrics: await this.registry.getMetricsAsJSON(),
      windows: { [requestTime.name]: this.#requestTime.samples(), [storageWrite.name]: this.#storageWrite.samples() },
    };
  }
}
