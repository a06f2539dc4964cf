/**
 * Partitioned databases (CouchDB 3's `couch_partition`): every normal document id is
 * `partition:docid`, and a partition is the id range `partition:` up to `partition;`, so a
 * partition's documents are one range of the id index whatever the rest of the database holds.
 */
import type { Config } from '../config/config.js';
import { badRequest, illegalDocid, illegalPartition, notPartitioned, partitionedDesignInNormalDatabase, partitionOverflow } from '../errors/catalog.js';
import { queryParseError } from '../errors/query-errors.js';
import type { CouchError } from '../errors/couch-error.js';
import type { JsonObject } from '../json/json.js';
import type { DocumentEdit, IdRangeStats, SecurityObject } from '../storage/storage.js';
import type { OpenedDatabase } from './opened-database.js';
import { validateDocumentId } from '../documents/document-json.js';

/**
 * The `_security` member where a database's props are kept: written once at creation, never shown
 * by `GET /{db}/_security` and kept across `PUT /{db}/_security`, and read with the security
 * object every request loads anyway.
 */
const PROPS_KEY = 'divan_props';

/** Databases CouchDB refuses to partition: system databases, by name or last path segment. */
const SYSTEM_DATABASES = new Set(['_dbs', '_nodes', '_global_changes', '_metadata', '_replicator', '_users']);

export function isPartitioned(security: SecurityObject): boolean {
  const props = security[PROPS_KEY];
  return typeof props === 'object' && props !== null && !Array.isArray(props) && props['partitioned'] === true;
}

/** `props` of `GET /{db}`: `{"partitioned": true}`, or `{}` as CouchDB shows a normal database. */
export function propsOf(security: SecurityObject): JsonObject {
  return isPartitioned(security) ? { partitioned: true } : {};
}

/** `_security` as a client sees it: without the props. */
export function withoutProps(security: SecurityObject): SecurityObject {
  if (!(PROPS_KEY in security)) return security;
  const { [PROPS_KEY]: _props, ...rest } = security;
  return rest;
}

/** A new `_security` from a client, keeping the props of the stored one (a client never sets them). */
export function keepingProps(next: SecurityObject, stored: SecurityObject): SecurityObject {
  const shown = withoutProps(next);
  return stored[PROPS_KEY] === undefined ? shown : { ...shown, [PROPS_KEY]: stored[PROPS_KEY] };
}

/** The initial `_security` of a database created with `?partitioned=true`. */
export function partitionedSecurity(security: SecurityObject): SecurityObject {
  return { ...security, [PROPS_KEY]: { partitioned: true } };
}

/** `?partitioned=` of `PUT /{db}` (chttpd_db's parse_partitioned_opt): true, or false when absent or "false". */
export function partitionedOption(db: string, value: string | null, usersDbSuffix: string): boolean {
  if (value === null || value === 'false') return false;
  if (value !== 'true') throw badRequest('Invalid `partitioned` parameter');
  const suffix = db.slice(db.lastIndexOf('/') + 1);
  if (SYSTEM_DATABASES.has(db) || suffix === '_replicator' || suffix === '_users' || suffix === usersDbSuffix) {
    throw badRequest('Cannot partition a system database');
  }
  return true;
}

/** couch_partition:validate_partition: a partition named in a path or a query. */
export function validatePartition(partition: string): void {
  if (partition === '') throw illegalPartition('Partition must not be empty');
  if (partition.startsWith('_')) throw illegalPartition('Partition must not start with an underscore');
  if (partition.includes(':')) throw illegalPartition('Partition must not contain a colon');
}

/** The partition of `partition:docid`; undefined for `_design/`, `_local/` and ids without a colon. */
export function partitionOf(id: string): string | undefined {
  if (id.startsWith('_')) return undefined;
  const colon = id.indexOf(':');
  return colon < 0 ? undefined : id.slice(0, colon);
}

/** The ids of a partition: from `p:` (included) to `p;` (excluded), `;` being the code point after `:`. */
export function partitionRange(partition: string): { start: string; end: string } {
  return { start: `${partition}:`, end: `${partition};` };
}

/**
 * What a partitioned view or Mango index puts before each row's encoded key: the partition's UTF-8 bytes (not its
 * collation weights, which hold some distinct names equal) between a string's type byte and END
 * (no id holds NUL): prefix-free, so a partition's rows are exactly the keys starting with it.
 */
export function partitionKeyPrefix(partition: string): Buffer {
  return Buffer.concat([Buffer.from([0x05]), Buffer.from(partition, 'utf8'), Buffer.from([0x00])]);
}

/** couch_partition:validate_docid, after the id passed couch_doc's own checks. */
export function requirePartitionedId(id: string): void {
  if (id.startsWith('_design/') || id.startsWith('_local/')) return;
  const colon = id.indexOf(':');
  if (colon < 0) throw illegalDocid('Doc id must be of form partition:id');
  validatePartition(id.slice(0, colon));
  validateDocumentId(id.slice(colon + 1));
}

/** `/{db}/_partition/…` of a database that is not partitioned. */
export function requirePartitioned(opened: OpenedDatabase): void {
  if (!isPartitioned(opened.security)) throw notPartitioned();
}

/** A partition's documents and the bytes of their leaf bodies: one range of the id index. */
export function partitionStats(opened: OpenedDatabase, partition: string): Promise<IdRangeStats> {
  const { start, end } = partitionRange(partition);
  return opened.storage.idRangeStats(opened.db, start, end);
}

/** `[couchdb] max_partition_size`; 0 or less: no limit. */
function maxPartitionSize(config: Config): number {
  return config.getInteger('couchdb', 'max_partition_size');
}

/**
 * The edits refused because their partition is already at `max_partition_size` (couch_db_updater's
 * full partitions): every interactive edit but a deletion, `_design/` documents apart. Replicated
 * edits pass, as in CouchDB.
 */
export async function overflowRefusals(opened: OpenedDatabase, edits: readonly DocumentEdit[], newEdits: boolean): Promise<Map<string, CouchError>> {
  const refused = new Map<string, CouchError>();
  const max = maxPartitionSize(opened.context.config);
  if (!newEdits || max <= 0 || !isPartitioned(opened.security)) return refused;
  const full = new Map<string, boolean>();
  for (const edit of edits) {
    const partition = partitionOf(edit.id);
    if (partition === undefined || edit.deleted) continue;
    if (!full.has(partition)) full.set(partition, (await partitionStats(opened, partition)).dataSize >= max);
    if (full.get(partition)) refused.set(edit.id, partitionOverflow(edit.id));
  }
  return refused;
}

/** A design document's views are partitioned in a partitioned database unless `options.partitioned` is false (couch_mrview_util). */
export function designPartitioned(security: SecurityObject, ddoc: JsonObject): boolean {
  const options = ddoc['options'];
  const asked = typeof options === 'object' && options !== null && !Array.isArray(options) ? options['partitioned'] : undefined;
  return isPartitioned(security) && asked !== false;
}

/** couch_mrview's check on save: `options.partitioned: true` needs a partitioned database. */
export function checkDesignPartitioning(opened: OpenedDatabase, edit: DocumentEdit): void {
  if (!edit.id.startsWith('_design/') || edit.deleted || isPartitioned(opened.security)) return;
  const options = edit.body['options'];
  if (typeof options === 'object' && options !== null && !Array.isArray(options) && options['partitioned'] === true) {
    throw partitionedDesignInNormalDatabase();
  }
}

/**
 * couch_mrview_util's validate_args for `partition`: a partitioned design document's views are
 * queried by partition only, a global one's never by partition. Answers the partition to read.
 */
export function viewPartition(opened: OpenedDatabase, ddoc: JsonObject, partition: string | null): string | undefined {
  if (partition === '') throw queryParseError('Invalid value for `partition`.');
  const partitioned = designPartitioned(opened.security, ddoc);
  if (partitioned && partition === null) throw queryParseError('`partition` parameter is mandatory for queries to this view.');
  if (!partitioned && partition !== null) throw queryParseError('`partition` parameter is not supported in this design doc');
  if (partition === null) return undefined;
  validatePartition(partition);
  return partition;
}
