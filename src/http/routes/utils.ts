import { requireServerAdmin } from '../../identity/authorization.js';
import { methodNotAllowed, notFound } from '../../errors/catalog.js';
import type { Reply } from '../reply.js';
import type { Request } from '../request.js';
import { ASSET_CACHE_CONTROL, PAGE_CACHE_CONTROL, findStaticDir, loadStaticFiles, matchesIfNoneMatch, type StaticFile } from '../static.js';
import { absoluteUrl } from '../urls.js';

/**
 * `/_utils/`: Divan's browser pages, served from the package's `static/` folder: the login page
 * (`session.html`) and the admin console (`index.html`, its style and its `console/` modules; see
 * docs/console.md). Only the listed files exist; they are read once and kept in memory. CouchDB
 * lets anyone GET or HEAD `/_utils*` (docs/browser.md); any other method is for server admins,
 * who then get 405 (CouchDB's `handle_utils_dir_req`).
 */
const LOGIN_PAGE = 'session.html';
const CONSOLE_PAGE = 'index.html';
export const CONSOLE_MODULES: readonly string[] = [
  'app.js',
  'api.js',
  'dom.js',
  'format.js',
  'databases.js',
  'documents.js',
  'document.js',
  'security.js',
  'users.js',
  'config.js',
  'tasks.js',
  'metrics.js',
  'mango.js',
  'mango-query.js',
  'mango-indexes.js',
  'search.js',
  'views.js',
  'view.js',
  'view-query.js',
  'view-progress.js',
  'design-function.js',
  'design-call.js',
  'replication.js',
  'replication-spec.js',
  'attachments.js',
  'upload.js',
  'metrics-live.js',
  'metrics-series.js',
  'charts.js',
].map((name) => `console/${name}`);
const UTILS_FILES: readonly string[] = [LOGIN_PAGE, 'theme.css', 'session.css', 'session.js', 'divan.svg', CONSOLE_PAGE, 'console.css', ...CONSOLE_MODULES];
const PREFIX = '/_utils/';

/** Sent with every file: the page runs only its own script and style and cannot be framed. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

let loading: Promise<Map<string, StaticFile>> | undefined;

/** The files, read on first use; a failed read is retried by the next request (and logged by it). */
function utilsFiles(): Promise<Map<string, StaticFile>> {
  loading ??= (async () => {
    const dir = findStaticDir(LOGIN_PAGE);
    if (dir === undefined) throw new Error(`the static/ folder with ${LOGIN_PAGE} was not found next to the Divan package`);
    return loadStaticFiles(dir, UTILS_FILES, (name) => (name.endsWith('.html') ? PAGE_CACHE_CONTROL : ASSET_CACHE_CONTROL));
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

export async function utils(request: Request): Promise<Reply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    requireServerAdmin(request.userCtx);
    throw methodNotAllowed(['GET', 'HEAD']);
  }
  const path = request.path;
  const query = request.query.toString();
  const search = query === '' ? '' : `?${query}`;
  // `/_utils` → `/_utils/`, as CouchDB; a login hand-off (`?return=`, `?reason=`) still goes to the
  // login page with its query, so `/_utils/?return=/db` brings the user back.
  // Permanent, as CouchDB's Fauxton: the console's address is /_utils/.
  if (path === '/_utils') return redirect(request, `${PREFIX}${search}`, 301);
  if (path === PREFIX && (request.query.has('return') || request.query.has('reason'))) return redirect(request, `${PREFIX}${LOGIN_PAGE}${search}`, 302);
  // An exact name of the allow-list, compared on the raw (undecoded) path: `..`, `%2F`, `%00`,
  // doubled slashes and every other spelling are simply not in the list.
  const name = path === PREFIX ? CONSOLE_PAGE : path.slice(PREFIX.length);
  const file = path.startsWith(PREFIX) ? (await utilsFiles()).get(name) : undefined;
  if (file === undefined) throw notFound('missing');
  const headers = {
    'Content-Type': file.contentType,
    'Cache-Control': file.cacheControl,
    ETag: file.etag,
    ...SECURITY_HEADERS,
  };
  if (matchesIfNoneMatch(request.header('if-none-match'), file.etag)) {
    // The body is given so that Content-Length is the file's length, as RFC 9110 §8.6 allows on a
    // 304; Node never sends a body with a 304.
    return { status: 304, body: file.body, headers };
  }
  return { status: 200, body: file.body, headers };
}

function redirect(request: Request, target: string, status: 301 | 302): Reply {
  return { status, body: Buffer.alloc(0), headers: { Location: absoluteUrl(request, target), 'Content-Type': 'text/plain; charset=utf-8' } };
}
