/**
 * `GET`/`POST /{db}/_design/{d}/_list/{f}/{view}` and `…/_list/{f}/{other_ddoc}/{view}`
 * (chttpd_show:handle_view_list_req): the list function `lists.f` of `{d}` renders the rows of a
 * view (of `{d}`, or of `_design/{other_ddoc}`), queried with `_view`'s options (a POST body's
 * members too, `keys` included), or the rows of `_all_docs` (`…/_list/{f}/_all_docs`). The answer is chunked and leaves as the function consumes the rows.
 */
import { CouchError } from '../../errors/couch-error.js';
import { requestBodyNotObject } from '../../errors/catalog.js';
import { chunkedErrorText, runList } from '../../design/list-function.js';
import { designDocHolding } from '../../design/named-function.js';
import { requestObject } from '../../design/request-object.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { Json, JsonObject } from '../../json/json.js';
import { applyParams, defaultArgs, type Param } from '../../views/query-args.js';
import { bodyObject } from '../../views/views.js';
import { allDocsRowStream, asQuery } from '../all-docs-rows.js';
import { readBulkBytes } from '../bulk-body.js';
import { showlistHeaders } from '../design-render.js';
import { checkKeyCount, jsonParam } from '../query.js';
import type { Reply } from '../reply.js';
import { parseJsonBytes, parseJsonText, type Request } from '../request.js';
import { databaseFacts, requestFacts } from '../request-facts.js';
import type { Services } from '../services.js';

const decode = (text: string): Json => parseJsonText(text) as Json;

type ListPath = ReturnType<typeof listPath>;
type Posted = { text: string; body: JsonObject } | undefined;

/** The list, the design document of the view, and the view, from the path; CouchDB's 404 `list_error` for any other shape. */
function listPath(segments: readonly string[]): { db: string; ddocName: string; listName: string; viewDdoc: string; viewName: string } {
  const [db, , ddocName, , listName, ...rest] = segments as string[];
  if (listName === undefined || (rest.length !== 1 && rest.length !== 2)) throw new CouchError(404, 'list_error', 'Invalid path.');
  const [viewDdoc, viewName] = rest.length === 2 ? rest : [ddocName!, rest[0]!];
  return { db: db!, ddocName: ddocName!, listName, viewDdoc: viewDdoc!, viewName: viewName! };
}

/** The POST body, as text (for `req.body`) and as the query options it holds. */
async function postBody(request: Request, services: Services): Promise<{ text: string; body: JsonObject } | undefined> {
  if (request.method !== 'POST') return undefined;
  const bytes = await readBulkBytes(request, services.config);
  const body = parseJsonBytes(bytes) as Json;
  if (!bodyObject(body)) throw requestBodyNotObject();
  return { text: bytes.toString('utf8'), body };
}

/** The query options of a view: a POST body's members, then the query string's (chttpd's parse_body_and_query). */
function viewArgs(request: Request, posted: Posted, services: Services) {
  const params = (entries: [string, unknown][], decoded: boolean): Param[] => entries.map(([name, value]) => ({ name, value, decoded }) as Param);
  let args = defaultArgs();
  if (posted !== undefined) args = applyParams(args, params(Object.entries(posted.body), true), decode);
  args = applyParams(args, params([...request.query.entries()], false), decode);
  checkKeyCount(args.keys?.length ?? 0, services.config);
  return args;
}

/**
 * `_list/{f}/_all_docs` (and `…/{other_ddoc}/_all_docs`, which only needs that design document to
 * exist): `_all_docs`' rows, opened as `_all_docs` is, with its options from the query string and
 * a POST body (`keys` too), the query string's first.
 */
async function allDocsRows(request: Request, opened: OpenedDatabase, path: ListPath, posted: Posted) {
  if (path.viewDdoc !== path.ddocName) await opened.readDocument(`_design/${path.viewDdoc}`, undefined, {});
  const query = new URLSearchParams([...request.query, ...(posted === undefined ? [] : asQuery(posted.body))]);
  const keys = posted !== undefined && 'keys' in posted.body ? posted.body['keys'] : jsonParam(request.query, 'keys');
  return allDocsRowStream(opened, query, keys, request.signal);
}

/** The rows a list renders: a view's, or `_all_docs`'. */
async function rowSource(request: Request, services: Services, opened: OpenedDatabase, path: ListPath, posted: Posted) {
  if (path.viewName === '_all_docs') return allDocsRows(request, opened, path, posted);
  const group = await services.views.group(opened, path.viewDdoc);
  return services.views.rowStream(opened, group, path.viewName, viewArgs(request, posted, services), request.signal);
}

export async function list(request: Request, services: Services): Promise<Reply> {
  const path = listPath(request.segments);
  const posted = await postBody(request, services);
  // `_all_docs` is opened as `_all_docs` itself is (those of the users databases are for admins).
  const opened = path.viewName === '_all_docs' ? await services.databases.openListing(path.db, request.userCtx, true) : await services.databases.open(path.db, request.userCtx);
  const ddoc = await designDocHolding(opened, path.ddocName, 'lists', path.listName);
  const rows = await rowSource(request, services, opened, path, posted);
  const req = requestObject(requestFacts(request, posted?.body, posted?.text), await databaseFacts(services, opened), null);
  const call = { sandbox: services.sandbox, db: opened.db, ddoc, name: path.listName, head: rows.head, req, rows: rows.batches[Symbol.asyncIterator]() };
  const reply: Reply = {
    status: 200,
    headers: {},
    stream: async (out) => {
      let written = false;
      const sink = {
        head: (status: number, headers: Record<string, string>) => {
          if (out.started) return;
          reply.status = status;
          reply.headers = showlistHeaders(services.config, headers);
        },
        write: (text: string) => {
          written = true;
          return out.write(text);
        },
      };
      try {
        await runList(call, sink);
      } catch (error) {
        if (!out.started) throw error;
        await out.write(chunkedErrorText(error));
        return;
      }
      // Nothing written: CouchDB answers a bare 200 (couch_mrview_show:last_chunk).
      if (!written) [reply.status, reply.headers] = [200, {}];
    },
  };
  return reply;
}
