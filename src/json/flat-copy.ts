const BEYOND_LATIN1 = /[^\x00-\xff]/;

/**
 * A copy of `text` that shares no memory with it, stored one byte per character when every
 * character fits in Latin-1. Lossless for any UTF-16, lone surrogates included.
 *
 * - A key cut out of a request string (a V8 sliced string) keeps the whole request string alive
 *   for as long as it is kept: a 60 KiB header per cache entry, or the password of a Basic header.
 * - V8 stores a piece cut from a text holding any character beyond Latin-1 (a "…" in an ini
 *   comment) two bytes per character, even when the piece is plain ASCII. Such a string makes
 *   every `JSON.stringify` result it enters two-byte, so each reply body is re-encoded on its way
 *   to the socket, and turns every `Map` lookup by an ASCII key into a mixed-width comparison.
 */
export function flatCopy(text: string): string {
  return BEYOND_LATIN1.test(text) ? Buffer.from(text, 'utf16le').toString('utf16le') : Buffer.from(text, 'latin1').toString('latin1');
}
