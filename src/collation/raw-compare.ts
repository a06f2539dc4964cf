/**
 * CouchDB's raw collation: a view with `options.collation: "raw"` gets no less function
 * (`couch_mrview_util:maybe_define_less_fun`), so its B-tree orders keys in Erlang's term order of the
 * decoded JSON, the order Mango's `cmp_raw` also uses: numbers < false < null < true (atoms by name)
 * < objects (`{Members}` tuples: member by member, the name then the value) < arrays (lists: member by
 * member, a prefix first) < strings (binaries: by their UTF-8 bytes). `raw-encode.ts` encodes keys so
 * that their bytes compare as this does.
 */
import type { Json, JsonObject } from '../json/json.js';

function rawRank(value: Json): number {
  if (typeof value === 'number') return 0;
  if (value === false) return 1;
  if (value === null) return 2;
  if (value === true) return 3;
  if (typeof value === 'string') return 6;
  return Array.isArray(value) ? 5 : 4;
}

/** Two strings by their UTF-8 bytes, which is their order by code point (not JavaScript's UTF-16 order). */
function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function compareLists(a: readonly Json[], b: readonly Json[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareRaw(a[i]!, b[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(a.length - b.length);
}

function compareMembers(a: JsonObject, b: JsonObject): number {
  const ea = Object.entries(a);
  const eb = Object.entries(b);
  for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
    const order = compareUtf8(ea[i]![0], eb[i]![0]) || compareRaw(ea[i]![1], eb[i]![1]);
    if (order !== 0) return order;
  }
  return Math.sign(ea.length - eb.length);
}

/** Compares two JSON values in Erlang's term order: -1, 0 or 1. */
export function compareRaw(a: Json, b: Json): number {
  const ra = rawRank(a);
  const rb = rawRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === 'number') return a < (b as number) ? -1 : a > (b as number) ? 1 : 0;
  if (typeof a === 'string') return compareUtf8(a, b as string);
  if (Array.isArray(a)) return compareLists(a, b as Json[]);
  if (ra === 4) return compareMembers(a as JsonObject, b as JsonObject);
  return 0;
}
