import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { badRequest } from '../errors/catalog.js';
import { checkBodyContentType } from './content-type.js';
import { Cors, addCorsHeaders, grantFor, preflight } from './cors.js';
import { errorReply } from './error-reply.js';
import { PeerResolver, normalizeAddress } from './peer.js';
import { needsRefresh } from '../auth/cookie/codec.js';
import { writeReply, writeStreamingReply, type OutgoingHeaders, type Reply } from './reply.js';
import { Request } from './request.js';
import { route } from './router.js';
import type { Endpoint, Services } from './services.js';

/** Splits a request target into decoded path segments (empty segments dropped, as CouchDB). */
export function parseTarget(target: string): { path: string; segments: string[]; query: URLSearchParams } | undefined {
  let pathAndQuery = target;
  if (!pathAndQuery.startsWith('/')) {
    try {
      const url = new URL(target);
      pathAndQuery = url.pathname + url.search;
    } catch {
      return undefined;
    }
  }
  const queryStart = pathAndQuery.indexOf('?');
  const path = queryStart === -1 ? pathAndQuery : pathAndQuery.slice(0, queryStart);
  const query = new URLSearchParams(queryStart === -1 ? '' : pathAndQuery.slice(queryStart + 1));
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    if (raw === '') continue;
    try {
      segments.push(decodeURIComponent(raw));
    } catch {
      return undefined;
    }
  }
  return { path, segments, query };
}

/**
 * Cookie-authenticated requests get a fresh cookie once more than 10 % of the timeout has passed;
 * Basic-authenticated ones get one at once (spec 5.1.3, `[chttpd_auth] basic_auth_cookie`), so the
 * next request can skip the password hash. Login and logout set their own cookie and keep it.
 */
async function addSessionCookie(request: Request, reply: Reply, services: Services): Promise<void> {
  const { handler, cookieSubject } = request.auth;
  if (!cookieSubject) return;
  const existing = reply.headers?.['Set-Cookie'];
  if (existing !== undefined && [existing].flat().some((cookie) => cookie.startsWith('AuthSession='))) return;
  const cookies = services.cookies;
  if (handler === 'cookie') {
    if (cookieSubject.issuedAt === undefined || !needsRefresh(cookieSubject.issuedAt, cookies.nowSeconds(), cookies.timeoutSeconds())) return;
  } else if (handler !== 'default' || !services.config.authBoolean('basic_auth_cookie', true)) {
    return;
  }
  const header = await cookies.freshSetCookie(cookieSubject.name, cookieSubject.salt, request.secure);
  reply.headers = { ...reply.headers, 'Set-Cookie': [...[existing ?? []].flat(), header] };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

let requestCounter = 0;
const requestIdPrefix = Math.random().toString(16).slice(2, 8);

/**
 * The path of a request: parse, authenticate, route, answer; every failure goes through one error
 * mapping, and one access log line is written per request.
 */
export function createPipeline(services: Services, extraEndpoints: ReadonlyMap<string, Endpoint> = new Map()) {
  const peers = new PeerResolver(services.config.getString('chttpd', 'trusted_proxies', '127.0.0.1, ::1'));
  services.config.onChange((change) => {
    if (change.section === 'chttpd' && change.key === 'trusted_proxies') {
      peers.configure(services.config.getString('chttpd', 'trusted_proxies', '127.0.0.1, ::1'));
    }
  });
  const serverHeader = `Divan/${services.version}`;
  const cors = new Cors(services.config, services.log);
  // Whether a socket's peer is a trusted proxy does not change during the connection: decide once.
  let trustedSockets = new WeakMap<object, boolean>();
  services.config.onChange((change) => {
    if (change.section === 'chttpd' && change.key === 'trusted_proxies') trustedSockets = new WeakMap();
  });
  const peerOf = (raw: IncomingMessage): { peer: string; viaTrustedProxy: boolean } => {
    const socketPeer = normalizeAddress(raw.socket.remoteAddress ?? '');
    let trusted = trustedSockets.get(raw.socket);
    if (trusted === undefined) {
      trusted = peers.isTrusted(socketPeer);
      trustedSockets.set(raw.socket, trusted);
    }
    const forwardedFor = raw.headers['x-forwarded-for'];
    return { peer: trusted && forwardedFor !== undefined ? peers.resolve(socketPeer, forwardedFor) : socketPeer, viaTrustedProxy: trusted };
  };

  return async function handle(raw: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = `${requestIdPrefix}${(requestCounter++ % 0xffffff).toString(16).padStart(6, '0')}`;
    const head = raw.method === 'HEAD';
    let request: Request | undefined;
    let reply: Reply;
    // CORS headers go on every reply to an allowed origin, errors included, except a preflight's own.
    const corsSettings = cors.settings;
    let corsGrant = grantFor(corsSettings, headerText(raw.headers.origin));
    let isPreflight = false;
    try {
      const target = parseTarget(raw.url ?? '/');
      if (!target) throw badRequest('invalid URL encoding');
      request = new Request(raw, {
        ...target,
        ...peerOf(raw),
        secure: Boolean((raw.socket as TLSSocket).encrypted),
        id: requestId,
        limits: { maxRequestBytes: services.config.getInteger('chttpd', 'max_http_request_size', 4294967296) },
      });
      // A preflight is answered before authentication (CouchDB's process_request/1): browsers send
      // no credentials with it. A refused one goes on as an ordinary request, without CORS headers.
      const check = preflight(corsSettings, request.method, raw.headers);
      if (check.kind === 'answer') {
        isPreflight = true;
        reply = { status: 204, headers: check.headers };
      } else {
        if (check.kind === 'refused') corsGrant = undefined;
        request.auth = await services.chain().authenticate(request, {
          requireValidUser: services.config.getBoolean('chttpd', 'require_valid_user', false),
          requireValidUserExceptForUp: services.config.getBoolean('chttpd', 'require_valid_user_except_for_up', false),
        });
        const endpoint = route(request, extraEndpoints);
        checkBodyContentType(request);
        reply = await endpoint(request, services);
      }
    } catch (error) {
      reply = errorReply(error, request, services.config, services.log);
    }
    if (request?.auth.cookieSubject) {
      try {
        await addSessionCookie(request, reply, services);
      } catch (error) {
        services.log.error(`could not issue a session cookie: ${(error as Error).message}`);
      }
    }
    if (res.headersSent || res.destroyed) return;
    const decorate = isPreflight || !corsSettings.enabled ? undefined : (headers: OutgoingHeaders) => addCorsHeaders(corsSettings, corsGrant, headers);
    if (reply.stream !== undefined) {
      // A streamed body (live _changes): errors before its first byte still get their error reply.
      const outcome = await writeStreamingReply(res, reply, { head, requestId, serverHeader, decorate });
      if (outcome.error !== undefined) {
        if (!outcome.started && !res.headersSent && !res.destroyed) {
          reply = errorReply(outcome.error, request, services.config, services.log);
          writeReply(res, reply, { head, requestId, serverHeader, decorate });
        } else {
          services.log.error(`streamed reply to ${raw.method} ${request?.path ?? '-'} failed: ${(outcome.error as Error)?.message ?? String(outcome.error)}`);
          res.destroy();
        }
      }
    } else {
      try {
        writeReply(res, reply, { head, requestId, serverHeader, decorate });
      } catch (error) {
        // A body that cannot be serialised (JSON.stringify overflowing its stack) is a bug, answered
        // as a 500 like any other: thrown from here it would be an unhandled rejection, a crash.
        if (res.headersSent || res.destroyed) res.destroy();
        else {
          reply = errorReply(error, request, services.config, services.log);
          writeReply(res, reply, { head, requestId, serverHeader, decorate });
        }
      }
    }
    if (services.log.enabled('info')) {
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      const who = request?.userCtx.name === null || request === undefined ? 'undefined' : JSON.stringify(request.userCtx.name);
      services.log.info(`${request?.peer ?? '-'} ${who} ${raw.method} ${request?.path ?? '-'} ${reply.status} ${elapsed.toFixed(1)}ms`);
    }
  };
}
