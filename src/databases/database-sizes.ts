/**
 * `sizes` of `GET /{db}`, bounded in cost. Storage computes them by reading every document's row
 * (`databaseInfo(name, { sizes: true })`), which grows with the database and runs on the serving
 * loop. While the database is small (under 10 000 documents) or a measurement cheap (under 1 ms)
 * every request measures, so sizes follow
 * every write, compaction and `_local` document. Once it is not, the database's kept sizes answer
 * while its update and purge sequences are unchanged, and a changed database is measured again at
 * most once per `SPACING` times what the last measurement took, so reading sizes never takes more
 * than about 2 % of the loop however often a client asks. The sizes of a large database can so lag
 * its last writes (and its compactions and `_local` documents, which move no sequence) by a few seconds.
 *
 * `recent` (design functions' `req.info`, asked on every `_show`, `_list` and `_update`): the kept
 * sizes also answer a small or cheaply measured database until the next measurement is due, so an
 * `_update` per request does not scan the database per request. Such sizes lag the database's
 * writes by at most `SPACING` times one measurement (50 ms for a database measured in 1 ms); the
 * counts and sequences are read anew every time.
 */
import type { DatabaseInfo, DatabaseSizes, Storage } from '../storage/storage.js';

const CHEAP_MS = 1;
/** Databases with fewer documents (live and deleted) are always measured: their scan is short whatever the storage's latency. */
const SMALL_DATABASE = 10_000;
const SPACING = 50;

interface Kept {
  /** The database's creation, so a database deleted and created again is measured anew. */
  instanceStartTime: string;
  updateSeq: number;
  purgeSeq: number;
  sizes: DatabaseSizes;
  measuredAt: number;
  costMs: number;
}

const keptByStorage = new WeakMap<Storage, Map<string, Kept>>();

function keptOf(storage: Storage): Map<string, Kept> {
  let kept = keptByStorage.get(storage);
  if (kept === undefined) {
    kept = new Map();
    keptByStorage.set(storage, kept);
  }
  return kept;
}

/**
 * The database's info with `sizes`, measured again only as the rules above allow. `now` is the
 * clock the rules read (milliseconds); tests pass their own so no answer depends on the machine's load.
 */
export async function infoWithSizes(storage: Storage, db: string, recent = false, now: () => number = () => performance.now()): Promise<DatabaseInfo | undefined> {
  const kept = keptOf(storage);
  const last = kept.get(db);
  if (last !== undefined) {
    const info = await storage.databaseInfo(db);
    if (info === undefined) {
      kept.delete(db);
      return undefined;
    }
    const unchanged = info.updateSeq === last.updateSeq && info.purgeSeq === last.purgeSeq;
    const same = info.instanceStartTime === last.instanceStartTime;
    const tooSoon = now() - last.measuredAt < last.costMs * SPACING;
    const small = info.docCount + info.deletedDocCount < SMALL_DATABASE;
    const costly = !small && last.costMs >= CHEAP_MS;
    if (same && ((recent && tooSoon) || (costly && (unchanged || tooSoon)))) return { ...info, sizes: last.sizes };
  }
  const started = now();
  const info = await storage.databaseInfo(db, { sizes: true });
  if (info?.sizes === undefined) return info;
  const measuredAt = now();
  kept.set(db, { instanceStartTime: info.instanceStartTime, updateSeq: info.updateSeq, purgeSeq: info.purgeSeq, sizes: info.sizes, measuredAt, costMs: measuredAt - started });
  return info;
}
