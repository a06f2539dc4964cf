/**
 * The `partition` query parameter (set by `/{db}/_partition/{p}/…`, or given directly as CouchDB
 * accepts it): a partition query reads one range of an index, never the rest of the database.
 */
import { isPartitioned, partitionRange } from '../databases/partitions.js';
import type { OpenedDatabase } from '../databases/opened-database.js';
import type { RangeOptions } from '../databases/types.js';
import { queryParseError } from '../errors/query-errors.js';

/** `partition` of an `_all_docs` query (couch_mrview_util's validate_all_docs_args). */
export function allDocsPartition(opened: OpenedDatabase, query: URLSearchParams): string | undefined {
  const partition = query.get('partition');
  if (partition === null) return undefined;
  if (partition === '') throw queryParseError('Invalid value for `partition`.');
  if (!isPartitioned(opened.security)) throw queryParseError('`partition` parameter is not supported on this db');
  return partition;
}

/** An id range narrowed to a partition's ids (apply_all_docs_partition): the tighter bound of each end wins. */
export function withinPartition(options: RangeOptions, partition: string): RangeOptions {
  const { start, end } = partitionRange(partition);
  const higher = (a: string | undefined, b: string): string => (a === undefined || a < b ? b : a);
  const lower = (a: string | undefined, b: string): string => (a === undefined || a > b ? b : a);
  // No id is `p;` itself (every id of a partitioned database holds a colon), so the end is inclusive or not alike.
  // `offset` counts from the partition's first id (no count through the other partitions' ids).
  const counted = { countOffset: false };
  return options.descending
    ? { ...options, ...counted, startKey: lower(options.startKey, end), endKey: higher(options.endKey, start) }
    : { ...options, ...counted, startKey: higher(options.startKey, start), endKey: lower(options.endKey, end) };
}
