/**
 * `GET/POST /{db}/_changes`: the `normal`, `longpoll`, `continuous` (alias `live`) and `eventsource`
 * feeds, with `since`, `limit`, `descending`, `style`, `include_docs`, `conflicts`, `heartbeat`,
 * `timeout` and the built-in filters `_doc_ids`, `_selector` and `_design`.
 *
 * Live feeds wait on the node's `ChangeNotifier` (no polling) and re-read storage when woken. Every
 * feed ends, with its `last_seq`, at the first of: `[chttpd] changes_timeout` after it started
 * (Divan's cap: CouchDB keeps a feed with a heartbeat open for ever), `timeout` without a change
 * (when there is no heartbeat), the expiry of the cookie or JWT that opened it, `limit` rows, the
 * node shutting down. Authorization is checked once, when the feed opens.
 */
import { decodeJsonObject, splitToken } from '../../auth/jwt/token.js';
import { parseSelector, matchesSelector, type Selector } from '../../documents/selector.js';
import { badRequest } from '../../errors/catalog.js';
import { isCouchError } from '../../errors/couch-error.js';
import type { ChangeRow, Json, JsonObject } from '../../storage/storage.js';
import { booleanParam, nonNegativeIntegerParam } from '../query.js';
import { json, type Reply, type ReplyStream } from '../reply.js';
import { LoopTurns } from '../event-loop.js';
import { parseJsonBytes, type Request } from '../request.js';
import type { Services } from '../services.js';
import type { DocumentReader } from '../../users/users-database.js';
import { readBulkBytes } from './replication.js';
import { formatSeq, parseSince } from './sequences.js';

type Feed = 'normal' | 'longpoll' | 'continuous' | 'eventsource';

type Filter =
  | { kind: 'none' }
  | { kind: 'doc_ids'; ids: string[] }
  | { kind: 'design' }
  | { kind: 'selector'; selector: Selector };

interface FeedArgs {
  db: string;
  /** How the caller may see documents: `include_docs` bodies and `_selector` matching go through it. */
  reader: DocumentReader;
  feed: Feed;
  allLeaves: boolean;
  includeDocs: boolean;
  conflicts: boolean;
  descending: boolean;
  limit?: number;
  since: number;
  filter: Filter;
  /** Milliseconds between heartbeats; undefined: none. */
  heartbeatMs?: number;
  /** End after this long without a change (no heartbeat only); undefined: never. */
  idleMs?: number;
  /** Epoch milliseconds at which the feed ends whatever happens. */
  deadline: number;
}

/** Rows read from storage per query; live feeds stream them batch by batch. */
const BATCH = 1000;
/** Feed re-reads that may run at once on this node, so that many woken feeds leave room for other requests. */
const CONCURRENT_FEED_READS = 4;

/** A small counting semaphore. */
class Permits {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

const feedReads = new Permits(CONCURRENT_FEED_READS);

export function changesTimeoutMs(services: Services): number {
  return Math.max(0, services.config.getInteger('chttpd', 'changes_timeout', 60000));
}

function positiveInteger(query: URLSearchParams, name: string, invalidValue: string, notAnInteger: string, allowZero: boolean): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^-?\d+$/.test(value)) throw badRequest(notAnInteger);
  const number = Number(value);
  if (number < 0 || (!allowZero && number === 0)) throw badRequest(invalidValue);
  return number;
}

/**
 * When the credential that opened a feed stops being valid: an AuthSession cookie at its issue
 * time plus `[chttpd_auth] timeout`, a JWT at its `exp`. Basic and proxy requests carry their
 * credential on every request: undefined.
 */
export function credentialExpiry(request: Request, services: Services): number | undefined {
  const { handler, cookieSubject } = request.auth;
  if (handler === 'cookie' && cookieSubject?.issuedAt !== undefined) {
    return (cookieSubject.issuedAt + services.cookies.timeoutSeconds()) * 1000;
  }
  if (handler === 'jwt') {
    const authorization = request.header('authorization') ?? '';
    if (!authorization.startsWith('Bearer ')) return undefined;
    try {
      const exp = decodeJsonObject(splitToken(authorization.slice('Bearer '.length))[1])['exp'];
      return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

async function readBody(request: Request, services: Services): Promise<JsonObject> {
  if (request.method !== 'POST') return {};
  const bytes = await readBulkBytes(request, services);
  if (bytes.length === 0) return {};
  // The Content-Type was checked before the endpoint ran (content-type.ts).
  const body = parseJsonBytes(bytes);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Request body must be a JSON object');
  return body as JsonObject;
}

function docIds(value: Json | undefined): string[] {
  if (!Array.isArray(value) || value.some((id) => typeof id !== 'string')) {
    throw badRequest('`doc_ids` filter parameter is not a list of doc ids.');
  }
  return value as string[];
}

function parseFilter(request: Request, body: JsonObject): Filter {
  const name = request.query.get('filter') ?? '';
  switch (name) {
    case '':
      return { kind: 'none' };
    case '_doc_ids': {
      let ids: Json | undefined = body['doc_ids'];
      if (request.method !== 'POST') {
        const raw = request.query.get('doc_ids');
        try {
          ids = raw === null ? undefined : (JSON.parse(raw) as Json);
        } catch {
          throw badRequest('`doc_ids` filter parameter is not a list of doc ids.');
        }
      }
      // An id with NUL cannot exist (and PostgreSQL cannot compare with one): it matches nothing.
      return { kind: 'doc_ids', ids: docIds(ids).filter((id) => !id.includes('\u0000')) };
    }
    case '_selector':
      if (request.method !== 'POST' || body['selector'] === undefined) throw badRequest('Selector must be specified in POST payload');
      return { kind: 'selector', selector: parseSelector(body['selector']) };
    case '_design':
      return { kind: 'design' };
    case '_view':
      throw badRequest('Divan does not run view functions: the `_view` filter is not supported.');
    default:
      if (name.startsWith('_')) throw badRequest('unknown builtin filter name');
      if (name.split('/').filter(Boolean).length !== 2) throw badRequest('`filter` must be of the form `designname/filtername`');
      throw badRequest('Divan does not run JavaScript filter functions: use _doc_ids, _selector or _design.');
  }
}

function parseArgs(request: Request, services: Services, db: string, reader: DocumentReader, body: JsonObject, updateSeq: number): FeedArgs {
  const query = request.query;
  const feedName = query.get('feed') ?? 'normal';
  const feed = feedName === 'live' ? 'continuous' : feedName;
  if (feed !== 'normal' && feed !== 'longpoll' && feed !== 'continuous' && feed !== 'eventsource') {
    throw badRequest('Supported `feed` types: normal, continuous, live, longpoll, eventsource');
  }
  const style = query.get('style') ?? 'main_only';
  if (style !== 'main_only' && style !== 'all_docs') throw badRequest('Invalid `style` parameter.');
  const changesTimeout = changesTimeoutMs(services);
  const heartbeatValue = query.get('heartbeat');
  const heartbeatMs =
    heartbeatValue === 'true'
      ? changesTimeout
      : positiveInteger(
          query,
          'heartbeat',
          'The heartbeat value should be a positive integer (in milliseconds).',
          'Invalid heartbeat value. Expecting a positive integer value (in milliseconds).',
          false,
        );
  const timeout = positiveInteger(query, 'timeout', 'The timeout value should be a non-negative integer', 'The timeout parameter should be a non-negative integer', true);
  const descending = booleanParam(query, 'descending');
  const lastEventId = feed === 'eventsource' ? request.header('last-event-id') : undefined;
  const sinceValue = lastEventId ?? query.get('since');
  const started = Date.now();
  const expiry = credentialExpiry(request, services);
  return {
    db,
    reader,
    feed,
    allLeaves: style === 'all_docs',
    includeDocs: booleanParam(query, 'include_docs'),
    conflicts: booleanParam(query, 'conflicts'),
    descending: feed === 'normal' && descending,
    limit: nonNegativeIntegerParam(query, 'limit'),
    since: feed === 'normal' && descending ? 0 : parseSince(sinceValue, updateSeq),
    filter: parseFilter(request, body),
    heartbeatMs,
    idleMs: heartbeatMs === undefined ? Math.min(timeout ?? changesTimeout, changesTimeout) : undefined,
    deadline: Math.min(started + changesTimeout, expiry ?? Number.POSITIVE_INFINITY),
  };
}

/** A change as the feeds write it. */
function render(change: ChangeRow, revs: readonly string[], args: FeedArgs): JsonObject {
  const entry: JsonObject = { seq: formatSeq(change.seq), id: change.id, changes: revs.map((rev) => ({ rev })) };
  if (change.deleted) entry['deleted'] = true;
  if (args.includeDocs) entry['doc'] = change.body ? args.reader.listed(fullDocument(change)) : null;
  return entry;
}

function fullDocument(change: ChangeRow): JsonObject {
  const entries: [string, Json][] = [
    ['_id', change.id],
    ['_rev', change.changes[0]!],
  ];
  if (change.deleted) entries.push(['_deleted', true]);
  entries.push(...Object.entries(change.body ?? {}));
  if (change.conflicts !== undefined && change.conflicts.length > 0) entries.push(['_conflicts', change.conflicts]);
  return Object.fromEntries(entries) as JsonObject;
}

/**
 * Applies the filter to rows read from storage; returns the rows to send. Selector matching gives
 * the event loop a turn through `turns` (one per feed read, across its batches).
 */
async function filterRows(services: Services, args: FeedArgs, rows: ChangeRow[], turns: LoopTurns): Promise<{ change: ChangeRow; entry: JsonObject }[]> {
  const filter = args.filter;
  if (filter.kind === 'design') rows = rows.filter((row) => row.id.startsWith('_design/'));
  if (filter.kind !== 'selector') return rows.map((change) => ({ change, entry: render(change, change.changes, args) }));
  // Each revision is matched on its own document (CouchDB opens every leaf for style=all_docs).
  const multi = rows.filter((row) => row.changes.length > 1);
  const opened = multi.length === 0 ? [] : await services.storage.openRevisions(args.db, multi.map((row) => ({ id: row.id, revs: row.changes })));
  const leafDocs = new Map<string, Map<string, JsonObject>>();
  multi.forEach((row, i) => {
    const docs = new Map<string, JsonObject>();
    for (const item of opened[i] ?? []) {
      if (!('ok' in item)) continue;
      const stored = item.ok;
      docs.set(stored.rev, args.reader.listed(Object.fromEntries([['_id', stored.id], ['_rev', stored.rev], ...(stored.deleted ? [['_deleted', true]] : []), ...Object.entries(stored.body)]) as JsonObject));
    }
    leafDocs.set(row.id, docs);
  });
  const result: { change: ChangeRow; entry: JsonObject }[] = [];
  for (const change of rows) {
    await turns.maybeYield();
    // Matched on what the caller may see: a selector must not probe fields the read rule hides.
    const winnerDoc = change.body === undefined ? undefined : args.reader.listed(fullDocument({ ...change, conflicts: undefined }));
    const passing = change.changes.filter((rev, index) => {
      const doc = index === 0 ? winnerDoc : leafDocs.get(change.id)?.get(rev);
      return doc !== undefined && matchesSelector(filter.selector, doc);
    });
    if (passing.length > 0) result.push({ change, entry: render(change, passing, args) });
  }
  return result;
}

interface Scan {
  entries: JsonObject[];
  /** Sequence of the last change read (sent or filtered out); `from` when none. */
  last: number;
  /** True when storage had nothing more after `last` at the time of reading. */
  exhausted: boolean;
}

/** Reads changes after `from`, in batches, until `max` rows pass the filter or storage has no more. */
async function scan(services: Services, args: FeedArgs, from: number, max: number | undefined): Promise<Scan> {
  const entries: JsonObject[] = [];
  const turns = new LoopTurns();
  let cursor = from;
  for (;;) {
    const wanted = max === undefined ? BATCH : Math.min(BATCH, max - entries.length);
    if (wanted <= 0) return { entries, last: cursor, exhausted: false };
    const unfiltered = args.filter.kind === 'none' || args.filter.kind === 'doc_ids';
    const rows = await services.storage.changes(args.db, {
      since: cursor,
      limit: unfiltered ? wanted : BATCH,
      includeDocs: args.includeDocs || args.filter.kind === 'selector',
      allLeaves: args.allLeaves,
      conflicts: args.conflicts && args.includeDocs,
      ids: args.filter.kind === 'doc_ids' ? args.filter.ids : undefined,
    });
    const passed = await filterRows(services, args, rows, turns);
    for (let i = 0; i < passed.length; i++) {
      entries.push(passed[i]!.entry);
      if (max !== undefined && entries.length >= max) {
        // Stop at the row that filled the limit: later rows of this batch are read again next time.
        return { entries, last: passed[i]!.change.seq, exhausted: false };
      }
    }
    if (rows.length > 0) cursor = rows[rows.length - 1]!.seq;
    if (rows.length < (unfiltered ? wanted : BATCH)) return { entries, last: cursor, exhausted: true };
  }
}

async function pendingAfter(services: Services, db: string, last: number): Promise<number> {
  const info = await services.storage.databaseInfo(db);
  return Math.max(0, (info?.updateSeq ?? 0) - last);
}

/** The normal feed: one JSON object, as before live feeds existed. */
async function normalFeed(services: Services, args: FeedArgs, updateSeq: number): Promise<Reply> {
  if (args.descending) {
    const rows = await services.storage.changes(args.db, {
      descending: true,
      limit: args.filter.kind === 'none' || args.filter.kind === 'doc_ids' ? args.limit : undefined,
      includeDocs: args.includeDocs || args.filter.kind === 'selector',
      allLeaves: args.allLeaves,
      conflicts: args.conflicts && args.includeDocs,
      ids: args.filter.kind === 'doc_ids' ? args.filter.ids : undefined,
    });
    const passed = (await filterRows(services, args, rows, new LoopTurns())).slice(0, args.limit);
    const last = passed.length > 0 ? passed[passed.length - 1]!.change.seq : updateSeq;
    return json(200, { results: passed.map((item) => item.entry), last_seq: formatSeq(last), pending: 0 });
  }
  const result = await scan(services, args, args.since, args.limit);
  const pending = result.entries.length === 0 ? 0 : Math.max(0, updateSeq - result.last);
  return json(200, { results: result.entries, last_seq: formatSeq(result.last), pending });
}

/** How a live feed writes: its first bytes, each change, a heartbeat, its end. */
interface FeedWriter {
  change(entry: JsonObject): string;
  heartbeat(): string;
  end(lastSeq: number, pending: number): string;
}

function writerFor(feed: Exclude<Feed, 'normal'>): FeedWriter {
  switch (feed) {
    case 'continuous':
      return {
        change: (entry) => `${JSON.stringify(entry)}\n`,
        heartbeat: () => '\n',
        end: (lastSeq, pending) => `${JSON.stringify({ last_seq: formatSeq(lastSeq), pending })}\n`,
      };
    case 'eventsource':
      return {
        change: (entry) => `data: ${JSON.stringify(entry)}\nid: ${JSON.stringify(entry['seq'])}\n\n`,
        heartbeat: () => 'event: heartbeat\ndata: \n\n',
        end: () => '',
      };
    case 'longpoll': {
      // CouchDB's layout: `{"results":[` + rows joined by `,\r\n` + `],"last_seq":…}`; heartbeats
      // are newlines inside the array, so the whole body stays one JSON value.
      let opened = false;
      let rows = 0;
      const open = (): string => {
        if (opened) return '';
        opened = true;
        return '{"results":[\n';
      };
      return {
        change: (entry) => `${open()}${rows++ > 0 ? ',\r\n' : ''}${JSON.stringify(entry)}`,
        heartbeat: () => `${open()}\n`,
        end: (lastSeq, pending) => `${open()}\n],\n"last_seq":${JSON.stringify(formatSeq(lastSeq))},"pending":${pending}}\n`,
      };
    }
  }
}

function liveFeed(services: Services, args: FeedArgs): Reply {
  const feed = args.feed as Exclude<Feed, 'normal'>;
  const headers: Record<string, string> = feed === 'eventsource' ? { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' } : {};
  return {
    status: 200,
    headers,
    stream: async (out: ReplyStream) => {
      const writer = writerFor(feed);
      let dirty = true;
      let wake: (() => void) | undefined;
      const poke = (): void => {
        const resume = wake;
        wake = undefined;
        resume?.();
      };
      const unsubscribe = services.changes.subscribe(args.db, () => {
        dirty = true;
        poke();
      });
      const stopOnClose = services.changes.onClose(poke);
      out.signal.addEventListener('abort', poke);
      let since = args.since;
      let sent = 0;
      let lastWrite = Date.now();
      let lastChange = lastWrite;
      const write = async (text: string): Promise<void> => {
        if (text === '') return;
        lastWrite = Date.now();
        await out.write(text);
      };
      try {
        let first = true;
        for (;;) {
          if (out.signal.aborted) return;
          if (dirty) {
            dirty = false;
            let result: Scan;
            try {
              const remaining = args.limit === undefined ? undefined : args.limit - sent;
              result = first ? await scan(services, args, since, remaining) : await feedReads.run(() => scan(services, args, since, remaining));
            } catch (error) {
              // Before the first byte the pipeline answers the error; after it (the database was
              // deleted under the feed), the feed just ends.
              if (!out.started || !isCouchError(error)) throw error;
              break;
            }
            first = false;
            for (const entry of result.entries) await write(writer.change(entry));
            sent += result.entries.length;
            since = result.last;
            if (result.entries.length > 0) lastChange = Date.now();
            if (args.limit !== undefined && sent >= args.limit) break;
            if (feed === 'longpoll' && sent > 0) break;
            if (!result.exhausted) {
              dirty = true;
              continue;
            }
          }
          const now = Date.now();
          if (services.changes.closed || now >= args.deadline) break;
          if (args.idleMs !== undefined && now - lastChange >= args.idleMs) break;
          let until = args.deadline;
          if (args.idleMs !== undefined) until = Math.min(until, lastChange + args.idleMs);
          if (args.heartbeatMs !== undefined) until = Math.min(until, lastWrite + args.heartbeatMs);
          if (!dirty) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, Math.max(0, until - now));
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = undefined;
          }
          if (out.signal.aborted) return;
          if (!dirty && args.heartbeatMs !== undefined && Date.now() - lastWrite >= args.heartbeatMs && Date.now() < args.deadline) {
            await write(writer.heartbeat());
          }
        }
        if (out.signal.aborted) return;
        const pending = await pendingAfter(services, args.db, since).catch(() => 0);
        await write(writer.end(since, pending));
      } finally {
        unsubscribe();
        stopOnClose();
        out.signal.removeEventListener('abort', poke);
      }
    },
  };
}

/** `GET/POST /{db}/_changes` for a database the caller may read (checked by the caller, who gives its reader). */
export async function changesFeed(request: Request, services: Services, db: string, reader: DocumentReader): Promise<Reply> {
  const body = await readBody(request, services);
  const info = await services.storage.databaseInfo(db);
  const updateSeq = info?.updateSeq ?? 0;
  const args = parseArgs(request, services, db, reader, body, updateSeq);
  if (args.feed === 'normal') return normalFeed(services, args, updateSeq);
  return liveFeed(services, args);
}
