import type { ChangeNotifier } from '../databases/change-notifier.js';
import { isCouchError } from '../errors/couch-error.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { JsonObject } from '../json/json.js';
import { filterReadsDocs, type FeedArgs } from './feed.js';
import { filterRows } from './filters.js';
import { pendingAfter, scan, type Scan } from './scan.js';

/** How a live feed's text is laid out on the wire: each change, a heartbeat, its end (the HTTP layer's). */
export interface FeedWriter {
  change(entry: JsonObject): string;
  heartbeat(): string;
  /** Written when the feed first waits for a change: longpoll's status, headers and opening go out at once, as CouchDB's. */
  waiting(): string;
  end(lastSeq: number, pending: number): string;
}

/** Where a live feed writes: the response stream. */
interface FeedSink {
  /** Resolves once the stream takes more. */
  write(text: string): Promise<void>;
  /** True once the first bytes went out (an error can then no longer be answered). */
  readonly started: boolean;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

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

/**
 * The normal feed's answer, one JSON object: `results`, `last_seq`, `pending`. `updateSeq` is the
 * caller's `update_seq`, asked for only when the answer needs it (in an access database it is a query).
 */
export async function normalFeed(args: FeedArgs, updateSeq: () => Promise<number>): Promise<JsonObject> {
  if (args.descending) {
    const rows = await args.opened.changes({
      descending: true,
      limit: args.filter.kind === 'none' || args.filter.kind === 'doc_ids' ? args.limit : undefined,
      includeDocs: args.includeDocs || filterReadsDocs(args.filter),
      allLeaves: args.allLeaves,
      conflicts: args.conflicts && args.includeDocs,
      ids: args.filter.kind === 'doc_ids' ? args.filter.ids : undefined,
    });
    const passed = (await filterRows(args, rows, LoopTurns.until(args.signal))).slice(0, args.limit);
    const last = passed.length > 0 ? passed[passed.length - 1]!.change.seq : await updateSeq();
    return { results: passed.map((item) => item.entry), last_seq: args.sequences.format(last), pending: 0 };
  }
  const result = await scan(args, args.since, args.limit);
  // A scan that read to the end left nothing pending (CouchDB counts the changes after last_seq).
  const pending = result.entries.length === 0 || result.exhausted ? 0 : await args.opened.pendingAfter(result.last, updateSeq);
  return { results: result.entries, last_seq: args.sequences.format(result.last), pending };
}

/**
 * One live feed (`longpoll`, `continuous`, `eventsource`): it waits on the node's ChangeNotifier
 * (no polling), re-reads storage when woken, and ends at the first of its limit, its deadline, its
 * idle timeout, the client leaving or the node shutting down (the HTTP layer's query parsing sets them).
 */
export class LiveFeed {
  readonly #notifier: ChangeNotifier;
  readonly #args: FeedArgs;
  readonly #out: FeedSink;
  readonly #writer: FeedWriter;
  #dirty = true;
  #wake: (() => void) | undefined;
  #since: number;
  #sent = 0;
  #first = true;
  #lastWrite = Date.now();
  #lastChange = this.#lastWrite;

  constructor(notifier: ChangeNotifier, args: FeedArgs, writer: FeedWriter, out: FeedSink) {
    this.#notifier = notifier;
    this.#args = args;
    this.#out = out;
    this.#writer = writer;
    this.#since = args.since;
  }

  readonly #poke = (): void => {
    const resume = this.#wake;
    this.#wake = undefined;
    resume?.();
  };

  async run(): Promise<void> {
    const changes = this.#notifier;
    const unsubscribe = changes.subscribe(this.#args.opened.db, () => {
      this.#dirty = true;
      this.#poke();
    });
    const stopOnClose = changes.onClose(this.#poke);
    this.#out.signal.addEventListener('abort', this.#poke);
    try {
      if (!(await this.#loop())) return;
      if (this.#out.signal.aborted) return;
      const pending = await pendingAfter(this.#args, this.#since).catch(() => 0);
      await this.#write(this.#writer.end(this.#since, pending));
    } finally {
      unsubscribe();
      stopOnClose();
      this.#out.signal.removeEventListener('abort', this.#poke);
    }
  }

  async #write(text: string): Promise<void> {
    if (text === '') return;
    this.#lastWrite = Date.now();
    await this.#out.write(text);
  }

  /** Sends changes until the feed is done; false when the client went away (nothing more to write). */
  async #loop(): Promise<boolean> {
    const args = this.#args;
    for (;;) {
      if (this.#out.signal.aborted) return false;
      if (this.#dirty) {
        const step = await this.#sendChanges();
        if (step === 'end') return true;
        if (step === 'more') continue;
      }
      const now = Date.now();
      if (this.#notifier.closed || now >= args.deadline) return true;
      if (args.idleMs !== undefined && now - this.#lastChange >= args.idleMs) return true;
      if (!this.#dirty) {
        await this.#write(this.#writer.waiting());
        await this.#sleep(now);
      }
      if (this.#out.signal.aborted) return false;
      const quiet = Date.now() - this.#lastWrite;
      if (!this.#dirty && args.heartbeatMs !== undefined && quiet >= args.heartbeatMs && Date.now() < args.deadline) {
        await this.#write(this.#writer.heartbeat());
      }
    }
  }

  /** One read of what changed since the last one: `end` the feed, read `more` at once, or `wait`. */
  async #sendChanges(): Promise<'end' | 'more' | 'wait'> {
    const args = this.#args;
    this.#dirty = false;
    let result: Scan;
    try {
      const remaining = args.limit === undefined ? undefined : args.limit - this.#sent;
      const read = (): Promise<Scan> => scan(args, this.#since, remaining);
      result = this.#first ? await read() : await feedReads.run(read);
    } catch (error) {
      // Before the first byte the pipeline answers the error; after it (the database was
      // deleted under the feed), the feed just ends.
      if (!this.#out.started || !isCouchError(error)) throw error;
      return 'end';
    }
    this.#first = false;
    for (const entry of result.entries) await this.#write(this.#writer.change(entry));
    this.#sent += result.entries.length;
    this.#since = result.last;
    if (result.entries.length > 0) this.#lastChange = Date.now();
    if (args.limit !== undefined && this.#sent >= args.limit) return 'end';
    if (args.feed === 'longpoll' && this.#sent > 0) return 'end';
    if (!result.exhausted) {
      this.#dirty = true;
      return 'more';
    }
    return 'wait';
  }

  /** Waits for a change, the next heartbeat, the idle timeout or the deadline, whichever comes first. */
  async #sleep(now: number): Promise<void> {
    const args = this.#args;
    let until = args.deadline;
    if (args.idleMs !== undefined) until = Math.min(until, this.#lastChange + args.idleMs);
    if (args.heartbeatMs !== undefined) until = Math.min(until, this.#lastWrite + args.heartbeatMs);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, until - now));
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }
}
