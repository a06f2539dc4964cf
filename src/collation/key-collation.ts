/**
 * The two collations a view's keys can have: CouchDB's default (ICU, `encode.ts`) and the raw one a
 * view asks for with `options.collation: "raw"` (`raw-encode.ts`), chosen per view as CouchDB's
 * `couch_mrview_util:maybe_define_less_fun` does.
 */
import type { Json } from '../json/json.js';
import { encode } from './encode.js';
import { encodeRaw } from './raw-encode.js';

export type KeyCollation = 'icu' | 'raw';

/** The collation a view's `options` ask for: raw only for the exact string `"raw"`, as CouchDB. */
export function collationOf(viewOptions: Json | undefined): KeyCollation {
  const raw = viewOptions !== null && typeof viewOptions === 'object' && !Array.isArray(viewOptions) && viewOptions['collation'] === 'raw';
  return raw ? 'raw' : 'icu';
}

/** The encoding whose bytes compare as `collation` orders keys. */
export function keyEncoder(collation: KeyCollation): (key: Json) => Buffer {
  return collation === 'raw' ? encodeRaw : encode;
}
