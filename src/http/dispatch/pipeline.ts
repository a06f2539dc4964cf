import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { badRequest } from '../../errors/catalog.js';
import { checkBodyContentType } from '../content-type.js';
import { Cors, addCorsHeaders, grantFor, preflight, type CorsGrant, type CorsSettings } from '../cors.js';
import { errorReply } from '../error-reply.js';
import { PeerResolver, normalizeAddress } from '../peer.js';
import { laneOrigin } from '../../cluster/heavy-lane.js';
import { needsRefresh } from '../../auth/cookie/codec.js';
import { writeReply, writeStreamingReply, type OutgoingHeaders, type Reply, type WriteOptions } from '../reply.js';
import { Request } from '../request.js';
import { rewrite } from './rewrite.js';
import { route } from './router.js';
import { clientRequestId, effectiveMethod, parseTarget } from '../target.js';
import type { Endpoint, Services } from '../services.js';


/**
 * Cookie-authenticated requests get a fresh cookie once more than 10 % of the timeout has passed;
 * Basic-authenticated ones get one at once (`[chttpd_auth] basic_auth_cookie`; docs/authentication.md,
 * "Basic responses carry a cookie"), so the next request can skip the password hash. Login and
 * logout set their own cookie and keep it.
 */
function addSessionCookie(request: Request, reply: Reply, services: Services): void | Promise<void> {
  const { handler, cookieSubject } = request.auth;
  if (!cookieSubject) return;
  const existing = reply.headers?.['Set-Cookie'];
  if (existing !== undefined && [existing].flat().some((cookie) => cookie.startsWith('AuthSession='))) return;
  const cookies = services.cookies;
  if (handler === 'cookie') {
    if (cookieSubject.issuedAt === undefined || !needsRefresh(cookieSubject.issuedAt, cookies.nowSeconds(), cookies.timeoutSeconds())) return;
  } else if (handler !== 'default' || !services.config.authBoolean('basic_auth_cookie')) {
    return;
  }
  const header = cookies.freshSetCookie(cookieSubject.name, cookieSubject.salt, request.secure);
  // The same cookie within one second is remembered: then no promise is needed.
  if (header instanceof Promise) return header.then((minted) => setSessionCookie(reply, existing, minted));
  setSessionCookie(reply, existing, header);
}

function setSessionCookie(reply: Reply, existing: string | string[] | undefined, header: string): void {
  // One cookie goes as a string: Node checks every element of an array header on every reply.
  reply.headers = { ...reply.headers, 'Set-Cookie': existing === undefined ? header : [...[existing].flat(), header] };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

let requestCounter = 0;
const requestIdPrefix = Math.random().toString(16).slice(2, 8);

/** The client address; `socketAddress` given for a request the heavy lane took (its own socket is the lane's). */
type PeerOf = (raw: IncomingMessage, socketAddress?: string) => { peer: string; viaTrustedProxy: boolean };

/** What every request of one server shares. */
interface PipelineContext {
  services: Services;
  extraEndpoints: ReadonlyMap<string, Endpoint>;
  peerOf: PeerOf;
  cors: Cors;
  serverHeader: string;
  /** On a heavy-lane process: the token of the requests the serving workers forward. */
  laneToken?: string;
}

/** One request on its way through the pipeline: what the later steps and the access log read. */
interface Exchange {
  raw: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  head: boolean;
  /** Undefined until the target parsed: errors before that are answered without one. */
  request?: Request;
  corsSettings: CorsSettings;
  corsGrant: CorsGrant | undefined;
  isPreflight: boolean;
}

/**
 * The client address of a request, through `[chttpd] trusted_proxies`. A socket's peer, and
 * whether it is a trusted proxy, do not change during the connection: both are decided once per
 * socket (`remoteAddress` is a system call each time it is read).
 */
function trustedPeerResolver(config: Services['config']): PeerOf {
  const proxies = (): string => config.getString('chttpd', 'trusted_proxies');
  const peers = new PeerResolver(proxies());
  let sockets = new WeakMap<object, { peer: string; viaTrustedProxy: boolean }>();
  config.onChange((change) => {
    if (change.section !== 'chttpd' || change.key !== 'trusted_proxies') return;
    peers.configure(proxies());
    sockets = new WeakMap();
  });
  return (raw, socketAddress) => {
    let known = socketAddress === undefined ? sockets.get(raw.socket) : undefined;
    if (socketAddress !== undefined) {
      const peer = normalizeAddress(socketAddress);
      known = { peer, viaTrustedProxy: peers.isTrusted(peer) };
    } else if (known === undefined) {
      const peer = normalizeAddress(raw.socket.remoteAddress ?? '');
      known = { peer, viaTrustedProxy: peers.isTrusted(peer) };
      sockets.set(raw.socket, known);
    }
    const forwardedFor = raw.headers['x-forwarded-for'];
    if (!known.viaTrustedProxy || forwardedFor === undefined) return known;
    return { peer: peers.resolve(known.peer, forwardedFor), viaTrustedProxy: true };
  };
}

function openExchange(raw: IncomingMessage, res: ServerResponse, context: PipelineContext): Exchange {
  // Read once: a `[cors]` change during the request must not mix two settings in one reply.
  const corsSettings = context.cors.settings;
  return {
    raw,
    res,
    requestId: clientRequestId(raw.headers['x-couch-request-id']) ?? `${requestIdPrefix}${(requestCounter++ % 0xffffff).toString(16).padStart(6, '0')}`,
    head: raw.method === 'HEAD',
    corsSettings,
    // CORS headers go on every reply to an allowed origin, errors included, except a preflight's own.
    corsGrant: grantFor(corsSettings, headerText(raw.headers.origin)),
    isPreflight: false,
  };
}

function parseRequest(exchange: Exchange, { services, peerOf, laneToken }: PipelineContext): Request {
  const { raw } = exchange;
  const target = parseTarget(raw.url ?? '/', services.config.getBoolean('chttpd', 'decode_plus_to_space'));
  if (!target) throw badRequest('invalid URL encoding');
  const origin = laneToken === undefined ? undefined : laneOrigin(raw, laneToken);
  const { peer, viaTrustedProxy } = peerOf(raw, origin?.socketAddress);
  // Named fields rather than spreads: this object is built for every request.
  return new Request(raw, {
    method: effectiveMethod(raw.method ?? 'GET', raw.headers['x-http-method-override']),
    segments: target.segments,
    query: target.search,
    path: target.path,
    peer,
    viaTrustedProxy,
    secure: origin?.secure ?? (raw.socket as TLSSocket).encrypted === true,
    id: exchange.requestId,
    limits: { maxRequestBytes: services.config.getInteger('chttpd', 'max_http_request_size') },
    response: exchange.res,
  });
}

/**
 * Preflight, authentication, routing and the endpoint itself; any failure becomes its error reply.
 * A plain reply when authentication and the endpoint answer without a promise: each await would
 * cost the request a turn of the microtask queue.
 */
function answer(exchange: Exchange, context: PipelineContext): Reply | Promise<Reply> {
  const fail = (error: unknown): Reply => errorReply(error, exchange.request, context.services.config, context.services.log);
  try {
    const { services } = context;
    const request = parseRequest(exchange, context);
    exchange.request = request;
    // A preflight is answered before authentication (CouchDB's process_request/1): browsers send
    // no credentials with it. A refused one goes on as an ordinary request, without CORS headers.
    const check = preflight(exchange.corsSettings, request.method, exchange.raw.headers);
    if (check.kind === 'answer') {
      exchange.isPreflight = true;
      return { status: 204, headers: check.headers };
    }
    if (check.kind === 'refused') exchange.corsGrant = undefined;
    const auth = services.chain().authenticate(request, {
      requireValidUser: services.config.getBoolean('chttpd', 'require_valid_user'),
      requireValidUserExceptForUp: services.config.getBoolean('chttpd', 'require_valid_user_except_for_up'),
    });
    const reply = auth instanceof Promise ? auth.then((settled) => callEndpoint(request, settled, context)) : callEndpoint(request, auth, context);
    return reply instanceof Promise ? reply.then(undefined, fail) : reply;
  } catch (error) {
    return fail(error);
  }
}

function callEndpoint(request: Request, auth: Request['auth'], context: PipelineContext): Reply | Promise<Reply> {
  request.auth = auth;
  return dispatch(request, context);
}

/** Routes a request (again, after a `_rewrite`: rewrite.ts) and calls its endpoint. */
function dispatch(request: Request, context: PipelineContext): Reply | Promise<Reply> {
  const [, second, , fourth] = request.segments;
  if (second === '_design' && fourth === '_rewrite') return rewrite(request, context.services, (next) => dispatch(next, context));
  const endpoint = route(request, context.extraEndpoints);
  checkBodyContentType(request);
  return endpoint(request, context.services);
}

/** A cookie that cannot be issued costs the client its shortcut, not its answer. */
function addSessionCookieOrLog(request: Request | undefined, reply: Reply, services: Services): void | Promise<void> {
  if (!request?.auth.cookieSubject) return;
  try {
    const adding = addSessionCookie(request, reply, services);
    if (adding instanceof Promise) return adding.catch((error: unknown) => logCookieFailure(services, error));
  } catch (error) {
    logCookieFailure(services, error);
  }
}

function logCookieFailure(services: Services, error: unknown): void {
  services.log.error(`could not issue a session cookie: ${(error as Error).message}`);
}

function writeOptions(exchange: Exchange, context: PipelineContext): WriteOptions {
  const { corsSettings, corsGrant } = exchange;
  const decorate = exchange.isPreflight || !corsSettings.enabled ? undefined : (headers: OutgoingHeaders) => addCorsHeaders(corsSettings, corsGrant, headers);
  return { head: exchange.head, requestId: exchange.requestId, bodyTime: exchange.request?.bodyMilliseconds ?? 0, serverHeader: context.serverHeader, decorate };
}

/** A streamed body (live _changes): errors before its first byte still get their error reply. Returns the reply sent. */
async function sendStream(res: ServerResponse, reply: Reply, exchange: Exchange, context: PipelineContext): Promise<Reply> {
  const { services } = context;
  const options = writeOptions(exchange, context);
  const outcome = await writeStreamingReply(res, reply, options);
  if (outcome.error === undefined) return reply;
  if (!outcome.started && !res.headersSent && !res.destroyed) {
    const failure = errorReply(outcome.error, exchange.request, services.config, services.log);
    writeReply(res, failure, options);
    return failure;
  }
  services.log.error(`streamed reply to ${exchange.raw.method} ${exchange.request?.path ?? '-'} failed: ${(outcome.error as Error)?.message ?? String(outcome.error)}`);
  res.destroy();
  return reply;
}

/** Writes a whole reply; returns the reply actually sent (an error reply when this one could not be). */
function send(res: ServerResponse, reply: Reply, exchange: Exchange, context: PipelineContext): Reply {
  const options = writeOptions(exchange, context);
  try {
    writeReply(res, reply, options);
    return reply;
  } catch (error) {
    // A body that cannot be serialised (JSON.stringify overflowing its stack) is a bug, answered
    // as a 500 like any other: thrown from here it would be an unhandled rejection, a crash.
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return reply;
    }
    const { services } = context;
    const failure = errorReply(error, exchange.request, services.config, services.log);
    writeReply(res, failure, options);
    return failure;
  }
}

function logAccess(exchange: Exchange, status: number, started: bigint, services: Services): void {
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  services.metrics.request(exchange.raw.method ?? 'GET', status, elapsed);
  const { log } = services;
  if (!log.enabled('info')) return;
  const { request } = exchange;
  const who = request?.userCtx.name === null || request === undefined ? 'undefined' : JSON.stringify(request.userCtx.name);
  log.info(`${request?.peer ?? '-'} ${who} ${exchange.raw.method} ${request?.path ?? '-'} ${status} ${elapsed.toFixed(1)}ms`);
}

/**
 * The path of a request: parse, authenticate, route, answer; every failure goes through one error
 * mapping, and one access log line and one count in the metrics are written per request.
 */
export function createPipeline(services: Services, extraEndpoints: ReadonlyMap<string, Endpoint> = new Map(), laneToken?: string) {
  const context: PipelineContext = {
    services,
    ...(laneToken === undefined ? {} : { laneToken }),
    extraEndpoints,
    peerOf: trustedPeerResolver(services.config),
    cors: new Cors(services.config, services.log),
    serverHeader: `Divan/${services.version}`,
  };
  return async function handle(raw: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const exchange = openExchange(raw, res, context);
    const answered = answer(exchange, context);
    const reply = answered instanceof Promise ? await answered : answered;
    // Awaited only when there is a cookie to consider: every await costs the request a promise.
    if (exchange.request?.auth.cookieSubject) {
      const adding = addSessionCookieOrLog(exchange.request, reply, services);
      if (adding) await adding;
    }
    // A change this request made must hold in every worker before the client can send the next one.
    const settling = services.settled?.();
    if (settling) await settling;
    if (res.headersSent) return;
    // The client went away: nothing to send, but the request is still counted and logged, with the
    // 499 of work that stopped for it (turns/loop-turns.ts) or the status of work that finished.
    if (res.destroyed) return logAccess(exchange, reply.status, started, services);
    const sent = reply.stream === undefined ? send(res, reply, exchange, context) : await sendStream(res, reply, exchange, context);
    logAccess(exchange, sent.status, started, services);
  };
}
