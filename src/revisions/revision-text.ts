/**
 * Revision text as CouchDB reads and orders it: `N-id`, where `id` is an MD5 in hex when Divan or
 * CouchDB generated it, and any text a replication peer chose otherwise (PouchDB tests send `2-x`).
 * The one place that decides which revision text is accepted, so every route and both backends
 * agree.
 *
 * @example
 * parseRevision('3-totally_fake_rev') // { generation: 3, hash: 'totally_fake_rev' }
 * compareRevisions('2-b', '2-a') // 1
 */
import { isStorableText } from '../json/json.js';

interface ParsedRevision {
  generation: number;
  hash: string;
}

const GENERATION = /^[0-9]+$/;
const HEX_ID = /^[0-9A-Fa-f]{32}$/;

/**
 * A revision id (the part after `N-`) as CouchDB's `couch_doc:parse_revid` takes it: any text,
 * even empty, except that an id of 32 bytes is an MD5 in hex (CouchDB stores it as 16 bytes, so
 * upper case comes back lower). Text PostgreSQL or UTF-8 cannot hold (NUL, a lone surrogate) is
 * refused on every backend. The id as stored, or undefined when refused.
 */
export function parseRevisionId(id: string): string | undefined {
  if (!isStorableText(id)) return undefined;
  if (Buffer.byteLength(id) !== 32) return id;
  return HEX_ID.test(id) ? id.toLowerCase() : undefined;
}

/**
 * Splits `N-id` at the first dash, as CouchDB's `couch_doc:parse_rev`: `N` a decimal integer
 * (CouchDB also takes a sign; Divan does not), `id` as `parseRevisionId` allows. Generation 0 names
 * `_local` revisions only; a revision tree never holds it (`isValidRevisionPath`). Undefined when
 * malformed.
 */
export function parseRevision(rev: string): ParsedRevision | undefined {
  const dash = rev.indexOf('-');
  if (dash < 0) return undefined;
  const digits = rev.slice(0, dash);
  const hash = parseRevisionId(rev.slice(dash + 1));
  if (!GENERATION.test(digits) || hash === undefined) return undefined;
  const generation = Number(digits);
  if (!Number.isSafeInteger(generation)) return undefined;
  return { generation, hash };
}

/** `rev` as stored (`N-id`, the id as `parseRevisionId` keeps it), or undefined when malformed. */
export function canonicalRevision(rev: unknown): string | undefined {
  if (typeof rev !== 'string') return undefined;
  const parsed = parseRevision(rev);
  return parsed === undefined ? undefined : `${parsed.generation}-${parsed.hash}`;
}

export function generationOf(rev: string): number {
  return Number(rev.slice(0, rev.indexOf('-')));
}

/** The id of `rev`: the text after its first dash. */
export function revisionIdOf(rev: string): string {
  return rev.slice(rev.indexOf('-') + 1);
}

const STORED_HEX_ID = /^[0-9a-f]{32}$/;

/** The bytes CouchDB compares for a revision id: an MD5 id as its 16 bytes, any other as UTF-8. */
export function revisionIdBytes(id: string): Buffer {
  return STORED_HEX_ID.test(id) ? Buffer.from(id, 'hex') : Buffer.from(id, 'utf8');
}

/**
 * Orders revisions by generation, then id as CouchDB's `{Pos, RevId}` order does: RevId is a
 * binary (16 bytes for an MD5 id, the UTF-8 text otherwise), compared byte by byte.
 */
export function compareRevisions(a: string, b: string): number {
  const byGeneration = generationOf(a) - generationOf(b);
  if (byGeneration !== 0) return byGeneration;
  const ha = revisionIdOf(a);
  const hb = revisionIdOf(b);
  if (ha === hb) return 0;
  // Two MD5 ids (Divan's own): hex text orders as its bytes, without decoding.
  if (STORED_HEX_ID.test(ha) && STORED_HEX_ID.test(hb)) return ha < hb ? -1 : 1;
  return Buffer.compare(revisionIdBytes(ha), revisionIdBytes(hb));
}
