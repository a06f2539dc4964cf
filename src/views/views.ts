/**
 * Map/reduce views of a database (docs/views.md): reads the design document, brings its index up
 * to date as `update` asks (`true` before answering, `lazy` after, `false` never), then answers
 * from the index. Also `_info`'s `view_index`, `_view_cleanup` and the `_view` filter of `_changes`.
 */
import { queryParseError } from '../errors/query-errors.js';
import { sequencesOf } from '../databases/sequences.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import { isObject } from '../documents/document-json.js';
import { notFound } from '../errors/catalog.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { Json, JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ActiveTasks } from '../tasks/active-tasks.js';
import { NO_INDEX, type ViewIndexFigures } from '../design/design-info.js';
import { updateIndex } from './indexer.js';
import type { ViewArgs } from './query-args.js';
import { checkArgs } from './view-ranges.js';
import { viewGroupOf, type ViewGroup } from './view-group.js';
import { designPartitioned } from '../databases/partitions.js';
import { mapQuery, VIEW_PAGE_ROWS, type DocumentRef, type IndexAt } from './view-query.js';
import { mapStream, type RowStream } from './view-stream.js';
import { reduceQuery } from './view-reduce.js';
import { fillReductions } from './stored-js-reduce.js';
import { builtinOf } from './builtin-reduces.js';
import type { ReduceLimit } from './reduce-limit.js';
import type { ViewFunctionsOf } from './view-functions.js';

/** Documents of `include_docs` read between two event-loop turns at most. */
const DOCS_PER_SLICE = 500;

interface ViewsSettings {
  /** The JavaScript sandbox that runs map and reduce functions, for one database. */
  functions: ViewFunctionsOf;
  tasks: ActiveTasks;
  log: Logger;
  /** `[query_server_config] reduce_limit` and its bounds as they are now. */
  reduceLimit: () => ReduceLimit;
}

export class Views {
  readonly #settings: ViewsSettings;

  constructor(settings: ViewsSettings) {
    this.#settings = settings;
  }

  /** The view group of `_design/{name}`: 404 `missing`/`deleted` as for the document itself. */
  async group(opened: OpenedDatabase, name: string): Promise<ViewGroup> {
    const { doc } = await opened.readDocument(`_design/${name}`, undefined, {});
    return viewGroupOf(doc, designPartitioned(opened.security, doc));
  }

  /** Brings the group's index up to date; answers the sequence it reached. */
  async refresh(opened: OpenedDatabase, group: ViewGroup): Promise<number> {
    const seq = await updateIndex({ storage: opened.storage, functions: this.#settings.functions(opened.db), tasks: this.#settings.tasks, log: this.#settings.log }, opened.db, group);
    await this.#fillJsReductions(opened, group, seq);
    return seq;
  }

  /**
   * Brings the block reductions of each JavaScript-reduced view up to date with the index, as
   * CouchDB reduces its B-tree nodes while it builds: a reduce query then only combines them. A
   * reduce function that fails is left for the query to report, so map queries still answer.
   */
  async #fillJsReductions(opened: OpenedDatabase, group: ViewGroup, seq: number): Promise<void> {
    for (const [name, view] of group.views) {
      if (view.reduce === undefined || builtinOf(view.reduce) !== undefined) continue;
      const index: IndexAt = { storage: opened.storage, db: opened.db, signature: group.signature, view: view.map, turns: LoopTurns.until(undefined), seq };
      try {
        await fillReductions(index, this.#reducer(opened.db, group, name, view.reduce));
      } catch (error) {
        this.#settings.log.warning(`view ${opened.db}/${group.id}/_view/${name}: reducing the index's blocks failed: ${String(error)}`);
      }
    }
  }

  /** One query of one view: `{total_rows, offset, rows}` or `{rows}` when it reduces; `signal` stops it when the client left. */
  async query(opened: OpenedDatabase, group: ViewGroup, viewName: string, args: ViewArgs, signal?: AbortSignal): Promise<JsonObject> {
    const { view, checked, seq, index } = await this.#prepare(opened, group, viewName, args, signal);
    const body = checked.reducing
      ? await reduceQuery(index, checked, this.#reducer(opened.db, group, viewName, view.reduce!))
      : await mapQuery(index, checked, (refs, options) => this.#documents(opened, refs, options, index.turns));
    if (args.updateSeq) body['update_seq'] = sequencesOf(await opened.info()).format(seq);
    this.#afterQuery(opened, group, args);
    return body;
  }

  /**
   * One query as a head and batches of rows (`_list`): map rows are read a page at a time as the
   * batches are taken; reduced rows, one per group, are computed first. The head is CouchDB's
   * list head: `total_rows` and `offset` of a map query, `update_seq` when asked.
   */
  async rowStream(opened: OpenedDatabase, group: ViewGroup, viewName: string, args: ViewArgs, signal?: AbortSignal): Promise<RowStream> {
    const { view, checked, seq, index } = await this.#prepare(opened, group, viewName, args, signal);
    let stream: RowStream;
    if (checked.reducing) {
      const rows = (await reduceQuery(index, checked, this.#reducer(opened.db, group, viewName, view.reduce!)))['rows'] as JsonObject[];
      stream = { head: {}, batches: (async function* () { for (let at = 0; at < rows.length; at += VIEW_PAGE_ROWS) yield rows.slice(at, at + VIEW_PAGE_ROWS); })() };
    } else {
      stream = await mapStream(index, checked, (refs, options) => this.#documents(opened, refs, options, index.turns));
    }
    if (args.updateSeq) stream = { head: { ...stream.head, update_seq: sequencesOf(await opened.info()).format(seq) }, batches: stream.batches };
    this.#afterQuery(opened, group, args);
    return stream;
  }

  /** The view, its checked options, the sequence its index reached (brought up to date first when asked), and where its rows are. */
  async #prepare(opened: OpenedDatabase, group: ViewGroup, viewName: string, args: ViewArgs, signal?: AbortSignal) {
    const view = group.views.get(viewName);
    if (view === undefined) throw notFound('missing_named_view');
    const checked = checkArgs(args, view.reduce !== undefined, group.maps[view.map]!.collation);
    let seq: number;
    if (args.update === 'true') seq = await this.refresh(opened, group);
    else seq = await opened.storage.views.open(opened.db, group.signature);
    const turns = LoopTurns.until(signal);
    if (group.partitioned && checked.partition === undefined) throw queryParseError('`partition` parameter is mandatory for queries to this view.');
    if (!group.partitioned && checked.partition !== undefined) throw queryParseError('`partition` parameter is not supported in this design doc');
    const index: IndexAt = { storage: opened.storage, db: opened.db, signature: group.signature, view: view.map, turns, seq };
    return { view, checked, seq, index };
  }

  /** `update=lazy`: the index is brought up to date after the answer. */
  #afterQuery(opened: OpenedDatabase, group: ViewGroup, args: ViewArgs): void {
    if (args.update !== 'lazy') return;
    this.refresh(opened, group).catch((error: unknown) => this.#settings.log.warning(`view ${opened.db}/${group.id}: update after the query failed: ${String(error)}`));
  }

  /** What a reduced query of `viewName` needs to run its reduce function. */
  #reducer(db: string, group: ViewGroup, viewName: string, source: string): Parameters<typeof reduceQuery>[2] {
    const { functions, log, reduceLimit } = this.#settings;
    const context = `${db}/${group.id}/_view/${viewName}`;
    return { source, ddoc: group.doc, view: viewName, functions: functions(db), log, limit: reduceLimit(), context };
  }

  /** Documents for `include_docs` as the caller may see them; null for missing or deleted ones. */
  async #documents(opened: OpenedDatabase, refs: readonly DocumentRef[], options: { conflicts: boolean; attachments: boolean; attEncodingInfo: boolean }, turns: LoopTurns): Promise<(JsonObject | null)[]> {
    const docs: (JsonObject | null)[] = [];
    for (let start = 0; start < refs.length; start += DOCS_PER_SLICE) {
      await turns.maybeYield();
      docs.push(...(await this.#documentSlice(opened, refs.slice(start, start + DOCS_PER_SLICE), options)));
    }
    return docs;
  }

  async #documentSlice(opened: OpenedDatabase, refs: readonly DocumentRef[], options: { conflicts: boolean; attachments: boolean; attEncodingInfo: boolean }): Promise<(JsonObject | null)[]> {
    return Promise.all(
      refs.map(async (ref) => {
        try {
          const { doc } = await opened.readDocument(ref.id, ref.rev, { conflicts: options.conflicts, attEncodingInfo: options.attEncodingInfo }, options.attachments ? { attachments: {} } : {});
          return doc['_deleted'] === true ? null : doc;
        } catch (error) {
          if (error instanceof Error && 'status' in error && error.status === 404) return null;
          throw error;
        }
      }),
    );
  }

  /** The figures `GET /{db}/_design/{name}/_info` reports of the group's index. */
  async info(opened: OpenedDatabase, group: ViewGroup): Promise<ViewIndexFigures> {
    const index = (await opened.storage.views.list(opened.db)).find((entry) => entry.signature === group.signature);
    const pending = Math.max(0, ((await opened.info())?.updateSeq ?? 0) - (index?.updateSeq ?? 0));
    const sizes = index === undefined ? undefined : await opened.storage.views.sizes(opened.db, group.signature);
    return { ...NO_INDEX, sizes: sizes ?? NO_INDEX.sizes, updateSeq: index?.updateSeq ?? 0, updatesPending: { minimum: pending, preferred: pending, total: pending } };
  }

  /** `_view_cleanup`: drops the indexes no design document of the database uses any more. */
  async cleanup(opened: OpenedDatabase): Promise<number> {
    const used = new Set<string>();
    const designs = await opened.listDocuments({ startKey: '_design/', endKey: '_design0', includeDocs: true });
    for (const summary of designs.rows) {
      if (summary.body === undefined || summary.deleted) continue;
      used.add(viewGroupOf({ _id: summary.id, ...summary.body } as JsonObject).signature);
    }
    const unused = (await opened.storage.views.list(opened.db)).map((index) => index.signature).filter((signature) => !used.has(signature));
    return unused.length === 0 ? 0 : opened.storage.views.drop(opened.db, unused);
  }

  /** The `_view` filter of `_changes`: the documents the view's map function emits anything for. */
  async emitting(opened: OpenedDatabase, group: ViewGroup, viewName: string, docs: readonly JsonObject[]): Promise<boolean[]> {
    if (!group.views.has(viewName)) throw notFound('missing json key: ' + viewName);
    const outcomes = await this.#settings.functions(opened.db).map(group.doc, ['views', viewName, 'map'], docs);
    return outcomes.map((outcome) => outcome.ok && Array.isArray(outcome.value) && outcome.value.length > 0);
  }
}

/** Whether a JSON value is a POST body object (for the routes). */
export function bodyObject(value: Json | undefined): value is JsonObject {
  return isObject(value ?? null);
}
