/**
 * Brings a search index up to its database's update sequence, as the view indexer does
 * (src/views/indexer.ts) and through the same pipeline (src/views/index-pipeline.ts): changes read
 * in batches, the index function run on each live document (design documents excepted) in two
 * sandbox calls at once while the previous batch is stored, each document's fields stored in place
 * of its old ones, one batch per transaction, one updater per index (`SearchStore.exclusive`). A
 * deleted document, or one whose index function throws (logged) or indexes nothing, leaves the
 * index; purged documents too.
 * A field keeps the type it was first indexed with; a value of another type is left out (logged).
 * Text fields under the `keyword` analyzer are indexed whole, as string fields.
 */
import { osProcessError } from '../errors/catalog.js';
import type { JsonObject } from '../json/json.js';
import type { Logger } from '../log/logger.js';
import type { ChangeRow, SearchDocument, SearchField, SearchFieldType, Storage } from '../storage/storage.js';
import { analyzerOf, type SearchIndex } from './search-index.js';
import type { FunctionOutcome } from '../views/view-functions.js';
import { catchUpTo, inHalves, purgedAway } from '../views/index-pipeline.js';

/** What the search engine needs of the sandbox: an index function over documents (JSON texts). */
export type IndexFunctionsOf = (db: string) => (ddoc: JsonObject, path: readonly string[], docTexts: readonly string[]) => Promise<FunctionOutcome[]>;

interface SearchIndexerContext {
  storage: Storage;
  functions: IndexFunctionsOf;
  log: Logger;
}

const TYPES = new Set<string>(['text', 'string', 'double', 'stored']);

/** The fields of one outcome, typed as the index first saw them (`types` learns new ones). */
function fieldsOf(outcome: FunctionOutcome, index: SearchIndex, types: Map<string, SearchFieldType>, warn: (message: string) => void): SearchField[] {
  if (!outcome.ok) {
    if (outcome.kind === 'timeout') throw osProcessError('OS process timed out.');
    warn(`index function failed (${outcome.kind}): ${JSON.stringify(outcome.error)}`);
    return [];
  }
  const fields: SearchField[] = [];
  for (const raw of Array.isArray(outcome.value) ? (outcome.value as JsonObject[]) : []) {
    const name = String(raw['name']);
    let type = String(raw['type']) as SearchFieldType;
    if (!TYPES.has(type)) continue;
    const analyzer = type === 'text' ? analyzerOf(index, name) : undefined;
    if (analyzer === 'keyword') type = 'string';
    const known = types.get(name);
    if (known !== undefined && known !== type) {
      warn(`field ${JSON.stringify(name)} was first indexed as ${known}, not ${type}: value left out`);
      continue;
    }
    types.set(name, type);
    fields.push({ type, name, value: raw['value'] as string | number, store: raw['store'] === true, ...(analyzer === undefined || type !== 'text' ? {} : { analyzer }) });
  }
  return fields;
}

/** The index function's outcomes for the live documents of a batch (design documents never indexed). */
interface RunBatch {
  changes: readonly ChangeRow[];
  live: readonly ChangeRow[];
  outcomes: FunctionOutcome[];
}

/** `{_id, _rev, ...body}` as JSON text, from the body's stored text (a JSON object without them). */
function documentText(id: string, rev: string, body: string): string {
  const head = `{"_id":${JSON.stringify(id)},"_rev":${JSON.stringify(rev)}`;
  const rest = body.slice(1).trimStart();
  return rest.startsWith('}') ? `${head}}` : `${head},${rest}`;
}

async function runBatch(context: SearchIndexerContext, db: string, index: SearchIndex, changes: readonly ChangeRow[]): Promise<RunBatch> {
  const live = changes.filter((change) => !change.deleted && change.bodyText !== undefined && !change.id.startsWith('_design/'));
  const docs = live.map((change) => documentText(change.id, change.changes[0]!, change.bodyText!));
  const functions = context.functions(db);
  const outcomes = await inHalves(docs, (part) => functions(index.doc, ['nouveau', index.name, 'index'], part));
  return { changes, live, outcomes };
}

/**
 * The documents a batch stores. Read in batch order, once the batches before it are stored (not
 * while the sandbox runs), so a field's first type is the one of the earliest change.
 */
function documentsOf(context: SearchIndexerContext, db: string, index: SearchIndex, batch: RunBatch, types: Map<string, SearchFieldType>): SearchDocument[] {
  const byId = new Map<string, SearchField[]>();
  batch.live.forEach((change, i) => {
    const warn = (message: string): void => context.log.warning(`search index ${db}/${index.ddocId}/${index.name}, document ${JSON.stringify(change.id)}: ${message}`);
    byId.set(change.id, fieldsOf(batch.outcomes[i]!, index, types, warn));
  });
  return batch.changes.map((change) => ({ id: change.id, fields: byId.get(change.id) ?? [] }));
}

/** Updates the index to the database's current sequence; answers the sequence reached. */
export async function updateSearchIndex(context: SearchIndexerContext, db: string, index: SearchIndex): Promise<number> {
  const { storage } = context;
  // An index already at the database's sequence answers without the updater lock, as views do.
  const reached = await storage.search.open(db, index.signature);
  if (reached >= ((await storage.databaseInfo(db))?.updateSeq ?? 0)) return reached;
  return storage.search.exclusive(db, index.signature, async () => {
    const seq = await storage.search.open(db, index.signature);
    const info = await storage.databaseInfo(db);
    const target = info?.updateSeq ?? 0;
    if (seq >= target) return seq;
    if ((info?.purgeSeq ?? 0) > 0) {
      const gone = await purgedAway(storage, db);
      if (gone.length > 0) await storage.search.update(db, index.signature, gone.map((id) => ({ id, fields: [] })), seq);
    }
    const types = await storage.search.fieldTypes(db, index.signature);
    return catchUpTo(seq, target, {
      storesElsewhere: true,
      read: (since, limit) => storage.changes(db, { since, limit, includeDocs: true, bodyText: true }),
      index: (changes) => runBatch(context, db, index, changes),
      store: (batch, reached) => storage.search.update(db, index.signature, documentsOf(context, db, index, batch, types), reached),
      reached: (reached) => storage.search.update(db, index.signature, [], reached),
    });
  });
}
