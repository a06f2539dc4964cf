/**
 * Nouveau's `sort`: relevance by default (`-<score>`, highest first; `<score>` lowest first), or
 * field names, `-` before one for descending, with an optional `<double>`/`<string>` suffix (the
 * form of CouchDB 3.4's Nouveau); the document id always ends the order (Nouveau appends `_id`),
 * so a bookmark can continue after any hit. A text field cannot sort (400); a field never indexed
 * sorts every hit as missing.
 */
import { badRequest } from '../errors/catalog.js';
import type { SearchFieldType, SearchSortKey } from '../storage/storage.js';

const FIELD = /^([-+])?([.\w]+)(?:<(double|string)>)?$/;

function keyOf(text: string, types: ReadonlyMap<string, SearchFieldType>): SearchSortKey {
  if (text === '-<score>' || text === '<score>') return { by: 'score', descending: text === '-<score>' };
  const match = FIELD.exec(text);
  if (match === null) throw badRequest(`${text} is not a valid sort parameter`);
  const [, sign, field, suffix] = match as unknown as [string, string | undefined, string, string | undefined];
  const descending = sign === '-';
  if (field === '_id') return { by: 'id', descending };
  const type = suffix ?? types.get(field) ?? 'string';
  if (type !== 'double' && type !== 'string') throw badRequest(`can't sort on field ${field}`);
  return { by: type, field, descending };
}

export function sortKeysOf(sort: readonly string[] | undefined, types: ReadonlyMap<string, SearchFieldType>): SearchSortKey[] {
  const keys = sort === undefined || sort.length === 0 ? [{ by: 'score', descending: true } as SearchSortKey] : sort.map((text) => keyOf(text, types));
  if (keys[keys.length - 1]!.by !== 'id') keys.push({ by: 'id', descending: false });
  return keys;
}
