/** Reading setting values: the built-in defaults table, booleans, integers, sorted sections. */
import { DEFAULTS } from './defaults.js';

/** The table's default; a setting missing from the table without a fallback is a programming error. */
export function builtIn(section: string, key: string): string | number | boolean {
  const table = DEFAULTS as Record<string, Record<string, string | number | boolean>>;
  const value = Object.hasOwn(table, section) && Object.hasOwn(table[section]!, key) ? table[section]![key] : undefined;
  if (value === undefined) throw new TypeError(`[${section}] ${key} has no default in src/config/defaults.ts`);
  return value;
}

export function toBoolean(value: string | undefined, fallback: boolean): boolean {
  switch (value?.trim().toLowerCase()) {
    case 'true':
      return true;
    case 'false':
      return false;
    default:
      return fallback;
  }
}

export function toInteger(value: string | undefined, fallback: number): number {
  const text = value?.trim();
  if (text === undefined || !/^-?\d+$/.test(text)) return fallback;
  const parsed = Number(text);
  // Beyond 2^53 the number would silently be another one; "-0" would leak a negative zero.
  return Number.isSafeInteger(parsed) ? parsed + 0 : fallback;
}

export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedRecord(keys: ReadonlyMap<string, string> | undefined): Record<string, string> {
  if (keys === undefined) return {};
  return Object.fromEntries([...keys].sort(([a], [b]) => byCodeUnit(a, b)));
}
