/**
 * Which json indexes a caller may have a query served from. A database's read rules (the users
 * databases' `afterDocRead`) may hide members of other people's documents, while an index holds
 * the stored values: its key range, its order (a sort), the bookmark (the last key) and
 * `execution_stats` (the keys in range) would each tell a hidden value. So an index is used only
 * when every member it is built on, its columns and its partial filter's fields, is shown to this
 * caller as stored in every document; otherwise the query is served as if it did not exist.
 */
import { fieldPath } from '../documents/selector-match.js';
import type { Json } from '../json/json.js';
import type { MangoIndex } from './index-definitions.js';
import { nouveauColumns } from './nouveau-index.js';

/** True when this top-level member of every document is shown to the caller as stored. */
export type ShownAsStored = (member: string) => boolean;

/** Every field name in a selector (sub-selector names too: more than needed, never less). */
function selectorFields(value: Json, into: string[]): string[] {
  if (Array.isArray(value)) for (const item of value) selectorFields(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      if (!key.startsWith('$')) into.push(key);
      selectorFields(member, into);
    }
  }
  return into;
}

/** Whether `index` is built only on members the caller reads as stored. */
export function readableIndex(index: MangoIndex, shown: ShownAsStored): boolean {
  if (index.type === 'special') return true;
  // A nouveau index of every field holds them all (its `$default` too): readable only when listing its fields.
  const columns = index.nouveau === undefined ? index.fields.map((field) => field.field) : nouveauColumns(index.nouveau.definition)?.filter((column) => column !== '$default').map((column) => column.slice(0, column.lastIndexOf(':')));
  // No document has a member named by a NUL: a filter showing it shows every member as stored.
  if (columns === undefined) return shown('\u0000');
  const fields = [...columns, ...(index.partialFilter === undefined ? [] : selectorFields(index.partialFilter, []))];
  return fields.every((field) => shown(fieldPath(field)[0]!));
}
