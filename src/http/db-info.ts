import type { OpenedDatabase } from '../databases/opened-database.js';
import { Sequences } from '../databases/sequences.js';
import type { JsonObject } from '../json/json.js';

type DatabaseInfo = NonNullable<Awaited<ReturnType<OpenedDatabase['info']>>>;

/** `GET /{db}`'s body (also a filter function's `req.info`). */
export function dbInfoBody(info: DatabaseInfo, compactRunning: boolean): JsonObject {
  const sequences = new Sequences(info.instanceStartTime);
  return {
    instance_start_time: info.instanceStartTime,
    db_name: info.name,
    // Divan does not purge: the purge sequence stays 0, in the shape of every other sequence.
    purge_seq: sequences.format(0),
    update_seq: sequences.format(info.updateSeq),
    // `file` also counts the superseded bodies compaction reclaims; the others count leaves.
    sizes: { file: info.dataSize + info.compactableSize, external: info.dataSize, active: info.dataSize },
    props: {},
    doc_del_count: info.deletedDocCount,
    doc_count: info.docCount,
    disk_format_version: 8,
    compact_running: compactRunning,
    cluster: { q: 1, n: 1, w: 1, r: 1 },
  };
}
