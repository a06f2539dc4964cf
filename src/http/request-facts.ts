import type { OpenedDatabase } from '../databases/opened-database.js';
import type { DatabaseFacts, RequestFacts } from '../design/request-object.js';
import type { JsonObject } from '../json/json.js';
import { databaseInfoBody } from './database-info.js';
import { propsOf, withoutProps } from '../databases/partitions.js';
import type { Request } from './request.js';
import type { Services } from './services.js';

/** The plain facts of `request` that design functions' `req` is built from (src/design/request-object.ts). */
export function requestFacts(request: Request, body?: JsonObject, bodyText?: string): RequestFacts {
  return {
    method: request.method,
    segments: request.segments,
    rawPath: request.raw.url ?? request.path,
    query: request.query,
    rawHeaders: request.raw.rawHeaders,
    cookie: request.header('cookie'),
    peer: request.peer,
    userCtx: request.userCtx,
    ...(body === undefined ? {} : { body }),
    ...(bodyText === undefined ? {} : { bodyText, contentType: request.contentType() }),
  };
}

/**
 * The database a design function runs for: its `GET /{db}` answer and `_security`. Its `sizes`
 * are recent rather than measured per call (database-sizes.ts), so a show or update costs the
 * same however large the database.
 */
export async function databaseFacts(services: Services, opened: OpenedDatabase): Promise<DatabaseFacts> {
  const info = await opened.info({ sizes: 'recent' });
  return {
    name: opened.db,
    info: info ? databaseInfoBody(info, services.databases.compactionRunning(opened.db), propsOf(opened.security)) : null,
    secObj: withoutProps(opened.security) as unknown as JsonObject,
  };
}
