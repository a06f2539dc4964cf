import { Sequences } from '../databases/sequences.js';
import type { DatabaseInfo } from '../databases/types.js';
import type { JsonObject } from '../json/json.js';

/** `GET /{db}` and each `info` of `/_dbs_info`, in CouchDB's shape (`info` read with its sizes); `props` from `propsOf` (databases/partitions.ts). */
export function databaseInfoBody(info: DatabaseInfo, compactRunning: boolean, props: JsonObject): JsonObject {
  const sizes = info.sizes;
  if (sizes === undefined) throw new Error(`the info of ${info.name} was read without its sizes (opened.info({ sizes: true }))`);
  const sequences = new Sequences(info.instanceStartTime);
  return {
    instance_start_time: info.instanceStartTime,
    db_name: info.name,
    purge_seq: sequences.format(info.purgeSeq),
    update_seq: sequences.format(info.updateSeq),
    sizes: { file: sizes.file, external: sizes.external, active: sizes.active },
    props,
    doc_del_count: info.deletedDocCount,
    doc_count: info.docCount,
    disk_format_version: 8,
    compact_running: compactRunning,
    cluster: { q: 1, n: 1, w: 1, r: 1 },
  };
}
