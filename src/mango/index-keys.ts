/**
 * The keys of json index rows: the indexed fields' values in CouchDB's collation, encoded one after
 * the other by `src/collation/encode.ts` (the encoding of view keys), so that SQLite (BLOB) and
 * PostgreSQL (bytea) order and range-scan index rows as views order keys, and as selectors compare
 * values. The keys starting with a prefix of whole values are those in [prefix, prefix + 0xFF).
 */
import { encodeAll } from '../collation/encode.js';
import type { Json } from '../json/json.js';

/**
 * Names the key encoding in every index's signature: a change of encoding names new rows, so the
 * indexes of existing databases are built again rather than read in another order. 2: view
 * collation (ICU); before it, strings were in code point order.
 */
export const KEY_ENCODING_VERSION = 2;

/** Above every byte that can follow a prefix of whole values. */
const TOP = 0xff;

/** The key of an index row: its fields' values in order. */
export function encodeKey(values: readonly Json[]): Uint8Array {
  return encodeAll(values);
}

/** The smallest key greater than every key that starts with `prefix`. */
export function afterPrefix(prefix: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(prefix.length + 1);
  bytes.set(prefix);
  bytes[prefix.length] = TOP;
  return bytes;
}

/** memcmp order, as both storage engines compare keys. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/**
 * The longest key stored: a longer one keeps its first bytes, because PostgreSQL's B-tree entries are
 * limited (about 2.7 kB). Rows whose keys share those bytes then come in id order among themselves,
 * and a scan still finds them (see `storedBounds`); the selector, matched on every document read,
 * keeps the answer exact.
 */
export const MAX_KEY_BYTES = 1024;

export function storedKey(key: Uint8Array): Uint8Array {
  return key.length > MAX_KEY_BYTES ? key.slice(0, MAX_KEY_BYTES) : key;
}

/** Bounds over stored keys that hold every row whose full key is in [gte, lt). */
export function storedBounds(gte: Uint8Array | undefined, lt: Uint8Array | undefined): { gte?: Uint8Array; lt?: Uint8Array } {
  return {
    gte: gte === undefined ? undefined : storedKey(gte),
    lt: lt === undefined ? undefined : lt.length > MAX_KEY_BYTES ? afterPrefix(lt.slice(0, MAX_KEY_BYTES)) : lt,
  };
}
