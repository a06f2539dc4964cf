/** JSON values as documents, bodies and query parameters carry them, and the text they may hold. A leaf: it imports nothing. */
export type Json = null | boolean | number | string | Json[] | JsonObject;

export interface JsonObject {
  [key: string]: Json;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * True when `text` can be written as UTF-8 (no lone surrogate) and stored as PostgreSQL text (no
 * NUL): what every identifier Divan stores as text must be. `String.prototype.isWellFormed` is
 * ES2024, not in this project's lib typings.
 */
export function isStorableText(text: string): boolean {
  return !LONE_SURROGATE.test(text) && !text.includes('\u0000');
}
