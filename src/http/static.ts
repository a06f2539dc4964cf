import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, parse } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Serving a fixed set of files from memory: an allow-list of names, read once, each with its
 * content type, a strong ETag and a caching policy. Nothing here looks at the request path beyond
 * an exact name match, so there is no path to traverse.
 */

export interface StaticFile {
  readonly name: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
  readonly cacheControl: string;
}

/** Content types by extension; a file whose extension is not here is never served. */
const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
]);

/**
 * `private`: any response may carry a refreshed `AuthSession` Set-Cookie (cookie sliding, the
 * Basic-auth cookie), which a shared cache must never hand to someone else. The page itself is
 * revalidated on every load (`no-cache`) so a new release shows at once; assets may be reused for
 * an hour.
 */
export const PAGE_CACHE_CONTROL = 'no-cache, private';
export const ASSET_CACHE_CONTROL = 'private, max-age=3600';

function contentTypeOf(name: string): string | undefined {
  return CONTENT_TYPES.get(parse(name).ext.toLowerCase());
}

/** A strong validator from the bytes: the same file gives the same ETag across restarts. */
function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * `If-None-Match` (RFC 9110 §13.1.2): `*` or a list of entity tags, compared weakly (a `W/`
 * prefix is ignored). Malformed members simply do not match.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const wanted = etag.replace(/^W\//, '');
  return header.split(',').some((member) => {
    const tag = member.trim();
    return tag === '*' || tag.replace(/^W\//, '') === wanted;
  });
}

/** Reads every allowed file of `dir`; a missing file or an unknown extension is an error. */
export async function loadStaticFiles(dir: string, names: readonly string[], cacheControl: (name: string) => string): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const name of names) {
    const contentType = contentTypeOf(name);
    if (contentType === undefined) throw new Error(`no content type for static file ${name}`);
    const body = await readFile(join(dir, name));
    files.set(name, { name, body, contentType, etag: etagOf(body), cacheControl: cacheControl(name) });
  }
  return files;
}

/**
 * The `static/` folder of the package: found by walking up from this module, so it works from the
 * compiled `dist/src/http/` as well as from `src/http/`. `marker` is a file that must be in it.
 */
export function findStaticDir(marker: string, from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = from;
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(dir, 'static');
    if (existsSync(join(candidate, marker))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
