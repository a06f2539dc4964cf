/**
 * This node's metrics, in one prom-client registry: the Prometheus scrape is the registry's own
 * exposition, and `GET /_node/_local/_stats` is the same numbers in CouchDB's tree (stats-tree.ts).
 * A leaf module: the layers that count (the request pipeline, the authentication chain's handlers,
 * the database layer) are given the `Metrics` object, or the small `AuthOutcomes` view of it.
 */
import { Counter, Gauge, Registry, Summary } from 'prom-client';
import { AUTH_METHODS, AUTH_OUTCOMES, type AuthMethod, type AuthOutcome, type AuthOutcomes } from './auth-outcomes.js';
import type { HitCounts } from './hit-counts.js';
import { SampleWindow } from './sample-window.js';
import { statsTree, type TreeEntry } from './stats-tree.js';

const METHODS = ['COPY', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
const STATUS_CODES = [200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 414, 415, 416, 417, 500, 501, 503];
/**
 * A CouchDB histogram (milliseconds, over the `[stats] interval` window) and its Prometheus summary
 * (seconds). A request only adds a sample to the window; the summary is rebuilt from the window's
 * samples when scraped, so both views show the same samples and `_count`/`_sum` are the window's,
 * as CouchDB's `couch_prometheus` computes them.
 */
class Latency {
  readonly window: SampleWindow;

  constructor(registry: Registry, name: string, help: string, windowSeconds: () => number) {
    const window = new SampleWindow(() => windowSeconds() * 1000);
    this.window = window;
    new Summary({
      name,
      help,
      percentiles: [0.5, 0.75, 0.9, 0.95, 0.99, 0.999],
      registers: [registry],
      collect() {
        this.reset();
        for (const milliseconds of window.samples()) this.observe(milliseconds / 1000);
      },
    });
  }

  observe(milliseconds: number): void {
    this.window.add(milliseconds);
  }
}

/** A counter whose value is read from elsewhere when scraped (cache counts, uptime). */
function readCounter(registry: Registry, name: string, help: string, labelNames: string[], read: () => [Record<string, string>, number][]): Counter<string> {
  return new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.inc(labels, value);
    },
  });
}

export class Metrics implements AuthOutcomes {
  readonly registry = new Registry();
  readonly #started: number;
  readonly #caches = new Map<string, HitCounts>();
  #authCache: HitCounts | undefined;
  readonly #requests: Counter<string>;
  readonly #methods: Counter<string>;
  readonly #codes: Counter<string>;
  readonly #reads: Counter<string>;
  readonly #writes: Counter<string>;
  readonly #feeds: Gauge<string>;
  readonly #auth: Counter<string>;
  readonly #requestTime: Latency;
  readonly #storageWrite: Latency;

  constructor(windowSeconds: () => number, started: number = Date.now()) {
    const registers = [this.registry];
    this.#started = started;
    this.#requests = new Counter({ name: 'couchdb_httpd_requests_total', help: 'number of HTTP requests', registers });
    this.#methods = new Counter({ name: 'couchdb_httpd_request_methods', help: 'number of HTTP requests by method', labelNames: ['method'], registers });
    this.#codes = new Counter({ name: 'couchdb_httpd_status_codes', help: 'number of HTTP responses by status code', labelNames: ['code'], registers });
    this.#reads = new Counter({ name: 'couchdb_database_reads_total', help: 'number of times a document was read from a database', registers });
    this.#writes = new Counter({ name: 'couchdb_database_writes_total', help: 'number of times a database was changed', registers });
    this.#feeds = new Gauge({ name: 'couchdb_httpd_clients_requesting_changes', help: 'number of clients for continuous _changes', registers });
    this.#auth = new Counter({ name: 'divan_auth_requests_total', help: 'authentication attempts by method and outcome', labelNames: ['method', 'outcome'], registers });
    this.#requestTime = new Latency(this.registry, 'couchdb_request_time_seconds', 'length of a request inside CouchDB without MochiWeb', windowSeconds);
    this.#storageWrite = new Latency(this.registry, 'divan_storage_write_time_seconds', 'length of a storage write, until durable', windowSeconds);
    readCounter(this.registry, 'couchdb_uptime_seconds', 'couchdb uptime', [], () => [[{}, Math.floor((Date.now() - this.#started) / 1000)]]);
    readCounter(this.registry, 'couchdb_auth_cache_requests_total', 'number of authentication cache requests', [], () => (this.#authCache ? [[{}, this.#authCache.hits + this.#authCache.misses]] : []));
    readCounter(this.registry, 'couchdb_auth_cache_misses_total', 'number of authentication cache misses', [], () => (this.#authCache ? [[{}, this.#authCache.misses]] : []));
    readCounter(this.registry, 'divan_cache_hits_total', 'cache hits by cache', ['cache'], () => [...this.#caches].map(([cache, counts]) => [{ cache }, counts.hits]));
    readCounter(this.registry, 'divan_cache_misses_total', 'cache misses by cache', ['cache'], () => [...this.#caches].map(([cache, counts]) => [{ cache }, counts.misses]));
    for (const method of METHODS) this.#methods.inc({ method }, 0);
    for (const code of STATUS_CODES) this.#codes.inc({ code }, 0);
    for (const method of AUTH_METHODS) for (const outcome of AUTH_OUTCOMES) this.#auth.inc({ method, outcome }, 0);
  }

  /** One HTTP request answered: its method, status and time inside Divan. */
  request(method: string, status: number, milliseconds: number): void {
    this.#requests.inc();
    this.#methods.inc({ method });
    this.#codes.inc({ code: status });
    this.#requestTime.observe(milliseconds);
  }

  documentsRead(count = 1): void {
    if (count > 0) this.#reads.inc(count);
  }

  documentsWritten(count = 1): void {
    if (count > 0) this.#writes.inc(count);
  }

  authOutcome(method: AuthMethod, outcome: AuthOutcome): void {
    this.#auth.inc({ method, outcome });
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
    this.#storageWrite.observe(milliseconds);
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

  /** The text exposition format (`Content-Type` in `contentType`). */
  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** CouchDB's `_stats` tree of the same numbers. */
  async stats(): Promise<Record<string, unknown>> {
    const value = async (counter: Counter<string> | Gauge<string>): Promise<[Record<string, string | number>, number][]> =>
      (await counter.get()).values.map((entry) => [entry.labels as Record<string, string | number>, entry.value]);
    const entries: TreeEntry[] = [
      { path: ['couchdb', 'httpd', 'requests'], type: 'counter', desc: 'number of HTTP requests', value: (await value(this.#requests))[0]?.[1] ?? 0 },
      ...(await value(this.#methods)).map(([labels, count]): TreeEntry => ({ path: ['couchdb', 'httpd_request_methods', String(labels['method'])], type: 'counter', desc: `number of HTTP ${String(labels['method'])} requests`, value: count })),
      ...(await value(this.#codes)).map(([labels, count]): TreeEntry => ({ path: ['couchdb', 'httpd_status_codes', String(labels['code'])], type: 'counter', desc: `number of HTTP ${String(labels['code'])} responses`, value: count })),
      { path: ['couchdb', 'httpd', 'clients_requesting_changes'], type: 'counter', desc: 'number of clients for continuous _changes', value: (await value(this.#feeds))[0]?.[1] ?? 0 },
      { path: ['couchdb', 'request_time'], type: 'histogram', desc: 'length of a request inside CouchDB without MochiWeb', value: this.#requestTime.window.summary() },
      { path: ['couchdb', 'database_reads'], type: 'counter', desc: 'number of times a document was read from a database', value: (await value(this.#reads))[0]?.[1] ?? 0 },
      { path: ['couchdb', 'database_writes'], type: 'counter', desc: 'number of times a database was changed', value: (await value(this.#writes))[0]?.[1] ?? 0 },
      { path: ['couchdb', 'auth_cache_hits'], type: 'counter', desc: 'number of authentication cache hits', value: this.#authCache?.hits ?? 0 },
      { path: ['couchdb', 'auth_cache_misses'], type: 'counter', desc: 'number of authentication cache misses', value: this.#authCache?.misses ?? 0 },
      ...(await value(this.#auth)).map(([labels, count]): TreeEntry => ({ path: ['divan', 'auth', String(labels['method']), String(labels['outcome'])], type: 'counter', desc: `number of ${String(labels['method'])} authentications ending in ${String(labels['outcome'])}`, value: count })),
      ...[...this.#caches].flatMap(([cache, counts]): TreeEntry[] => [
        { path: ['divan', 'cache', cache, 'hits'], type: 'counter', desc: `number of ${cache} cache hits`, value: counts.hits },
        { path: ['divan', 'cache', cache, 'misses'], type: 'counter', desc: `number of ${cache} cache misses`, value: counts.misses },
      ]),
      { path: ['divan', 'storage', 'write_time'], type: 'histogram', desc: 'length of a storage write, until durable', value: this.#storageWrite.window.summary() },
    ];
    return statsTree(entries);
  }
}
