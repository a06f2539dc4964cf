/**
 * The argument lists of `$in`, `$nin` and `$all` as hash sets, so that a document is matched in
 * O(1) per value instead of comparing it with every argument (a 10 000-value `$in` over 20 000
 * documents is 200 million comparisons otherwise).
 *
 * A set is keyed by a canonical text of each value that two values share exactly when
 * `selector-collation.ts`'s `equal` holds between them: the value's collation sort key (numbers by
 * value, strings ICU holds equal alike, arrays member by member), objects by their members in any
 * order at the top (as `equal` compares them).
 */
import { encode } from '../collation/encode.js';
import { isObject } from './document-json.js';
import type { Json, JsonObject } from '../json/json.js';

/** Two values collate equal exactly when their sort keys are the same bytes. */
function orderedKey(value: Json): string {
  return encode(value).toString('hex');
}

/** `equal`'s equality at the top: an object's members in any order, each compared with `equal`. */
export function valueKey(value: Json): string {
  if (!isObject(value)) return orderedKey(value);
  const names = Object.keys(value).sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${valueKey((value as JsonObject)[name]!)}`).join(',')}}`;
}

/** The distinct values of one operator's argument list. */
export class ValueSet {
  readonly #keys: Set<string>;

  constructor(values: readonly Json[]) {
    this.#keys = new Set(values.map(valueKey));
  }

  has(value: Json): boolean {
    return this.#keys.has(valueKey(value));
  }

  /** `$in`'s rule: an array matches when any of its elements is in the set. */
  hasAnyOf(value: Json): boolean {
    return Array.isArray(value) ? value.some((item) => this.has(item)) : this.has(value);
  }

  /** `$all`'s rule: every value of the set is an element of `items`. */
  allIn(items: readonly Json[]): boolean {
    if (this.#keys.size === 0) return true;
    const present = new Set(items.map(valueKey));
    for (const key of this.#keys) if (!present.has(key)) return false;
    return true;
  }
}
