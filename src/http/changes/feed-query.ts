import type { FeedArgs, Filter } from '../../changes/feed.js';
import type { OpenedDatabase } from '../../databases/opened-database.js';
import type { Sequences } from '../../databases/sequences.js';
import type { FilterFunction } from '../../design/filter-function.js';
import { designDocHolding } from '../../design/named-function.js';
import { parseSelector } from '../../documents/selector.js';
import { badRequest, requestBodyNotObject } from '../../errors/catalog.js';
import type { DesignDoc } from '../../js/sandbox.js';
import type { Json, JsonObject } from '../../json/json.js';
import { readBulkBytes } from '../bulk-body.js';
import { booleanParam, nonNegativeIntegerParam } from '../query.js';
import { parseJsonBytes, type Request } from '../request.js';
import type { Services } from '../services.js';

/** The `_view` filter's map function, `view=ddoc/name` (looked up by requireNamedFunction before). */
function viewFilter(request: Request, services: Services, opened: OpenedDatabase): Filter {
  const [ddoc, name] = (request.query.get('view') ?? '').split('/').filter(Boolean);
  if (ddoc === undefined || name === undefined) throw badRequest('`view` must be of the form `designname/viewname`');
  let group: ReturnType<Services['views']['group']> | undefined;
  return {
    kind: 'view',
    matches: async (docs) => services.views.emitting(opened, await (group ??= services.views.group(opened, ddoc)), name, docs),
  };
}

function changesTimeoutMs(services: Services): number {
  return Math.max(0, services.config.getInteger('chttpd', 'changes_timeout'));
}

function positiveInteger(query: URLSearchParams, name: string, invalidValue: string, notAnInteger: string, allowZero: boolean): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^-?\d+$/.test(value)) throw badRequest(notAnInteger);
  const number = Number(value);
  if (number < 0 || (!allowZero && number === 0)) throw badRequest(invalidValue);
  return number;
}

export async function readBody(request: Request, services: Services): Promise<JsonObject> {
  if (request.method !== 'POST') return {};
  const bytes = await readBulkBytes(request, services.config);
  if (bytes.length === 0) return {};
  // The Content-Type was checked before the endpoint ran (content-type.ts).
  const body = parseJsonBytes(bytes);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw requestBodyNotObject();
  return body as JsonObject;
}

function docIds(value: Json | undefined): string[] {
  if (!Array.isArray(value) || value.some((id) => typeof id !== 'string')) {
    throw badRequest('`doc_ids` filter parameter is not a list of doc ids.');
  }
  return value as string[];
}

function parseFilter(request: Request, body: JsonObject, named: FilterFunction | undefined, views: () => Filter): Filter {
  const name = request.query.get('filter') ?? '';
  switch (name) {
    case '':
      return { kind: 'none' };
    case '_doc_ids': {
      let ids: Json | undefined = body['doc_ids'];
      if (request.method !== 'POST') {
        const raw = request.query.get('doc_ids');
        try {
          ids = raw === null ? undefined : (JSON.parse(raw) as Json);
        } catch {
          throw badRequest('`doc_ids` filter parameter is not a list of doc ids.');
        }
      }
      // An id with NUL cannot exist (and PostgreSQL cannot compare with one): it matches nothing.
      return { kind: 'doc_ids', ids: docIds(ids).filter((id) => !id.includes('\u0000')) };
    }
    case '_selector':
      if (request.method !== 'POST') throw badRequest('Selector must be specified in POST payload');
      if (body['selector'] === undefined) throw badRequest('Selector error: expected a JSON object');
      return { kind: 'selector', selector: parseSelector(body['selector']) };
    case '_design':
      return { kind: 'design' };
    case '_view':
      if ((request.query.get('view') ?? '') === '') throw badRequest('`view` filter parameter is not provided.');
      return views();
    default:
      if (name.startsWith('_')) throw badRequest('unknown builtin filter name');
      if (name.split('/').filter(Boolean).length !== 2 || named === undefined) throw badRequest('`filter` must be of the form `designname/filtername`');
      return { kind: 'function', ...named };
  }
}

/**
 * As CouchDB (`couch_changes:configure_filter`), a filter or `_view` function is looked up before
 * anything else (src/design/named-function.ts). Returns the design document and the function's
 * name for `filter=ddoc/name`.
 */
export async function requireNamedFunction(request: Request, opened: OpenedDatabase): Promise<{ ddoc: DesignDoc; name: string } | undefined> {
  const filter = request.query.get('filter') ?? '';
  const member = filter === '_view' ? 'views' : 'filters';
  const name = filter === '_view' ? (request.query.get('view') ?? '') : filter.startsWith('_') ? '' : filter;
  const parts = name.split('/').filter(Boolean);
  // Anything else is refused by parseFilter with CouchDB's wording.
  if (parts.length !== 2) return undefined;
  const ddoc = await designDocHolding(opened, parts[0]!, member, parts[1]!);
  return member === 'filters' ? { ddoc, name: parts[1]! } : undefined;
}

export async function parseArgs(
  request: Request,
  services: Services,
  opened: OpenedDatabase,
  body: JsonObject,
  at: { updateSeq: () => Promise<number>; sequences: Sequences; named?: FilterFunction },
): Promise<FeedArgs> {
  const query = request.query;
  const feedName = query.get('feed') ?? 'normal';
  const feed = feedName === 'live' ? 'continuous' : feedName;
  if (feed !== 'normal' && feed !== 'longpoll' && feed !== 'continuous' && feed !== 'eventsource') {
    throw badRequest('Supported `feed` types: normal, continuous, live, longpoll, eventsource');
  }
  const style = query.get('style') ?? 'main_only';
  if (style !== 'main_only' && style !== 'all_docs') throw badRequest('Invalid `style` parameter.');
  const changesTimeout = changesTimeoutMs(services);
  const heartbeatValue = query.get('heartbeat');
  const heartbeatMs =
    heartbeatValue === 'true'
      ? changesTimeout
      : positiveInteger(
          query,
          'heartbeat',
          'The heartbeat value should be a positive integer (in milliseconds).',
          'Invalid heartbeat value. Expecting a positive integer value (in milliseconds).',
          false,
        );
  const timeout = positiveInteger(query, 'timeout', 'The timeout value should be a non-negative integer', 'The timeout parameter should be a non-negative integer', true);
  const descending = booleanParam(query, 'descending');
  const lastEventId = feed === 'eventsource' ? request.header('last-event-id') : undefined;
  const sinceValue = lastEventId ?? query.get('since');
  const now = sinceValue === 'now' ? await at.updateSeq() : 0;
  const started = Date.now();
  const expiry = request.auth.credentialExpiry?.();
  return {
    opened,
    feed,
    allLeaves: style === 'all_docs',
    includeDocs: booleanParam(query, 'include_docs'),
    attachments: booleanParam(query, 'attachments'),
    attEncodingInfo: booleanParam(query, 'att_encoding_info'),
    conflicts: booleanParam(query, 'conflicts'),
    descending: feed === 'normal' && descending,
    limit: nonNegativeIntegerParam(query, 'limit'),
    since: feed === 'normal' && descending ? 0 : at.sequences.parse(sinceValue, now),
    sequences: at.sequences,
    filter: parseFilter(request, body, at.named, () => viewFilter(request, services, opened)),
    heartbeatMs,
    idleMs: heartbeatMs === undefined ? Math.min(timeout ?? changesTimeout, changesTimeout) : undefined,
    deadline: Math.min(started + changesTimeout, expiry ?? Number.POSITIVE_INFINITY),
    signal: request.signal,
  };
}
