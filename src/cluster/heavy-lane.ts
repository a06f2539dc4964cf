import { Agent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { timingSafeEqual } from 'node:crypto';
import { serviceUnavailable } from '../errors/catalog.js';

/**
 * The heavy lane (docs/workers.md): worker processes at a lower CPU priority that answer the
 * requests known to hold an event loop for long (a full-scan `_find`, a wide grouped reduce). A
 * serving worker answers every request itself and notes those whose loops gave several turns
 * (`[divan] heavy_lane_slices` or more, src/turns/request-slices.ts); the same method and URL are
 * then forwarded to the lane for a while, over a Unix socket only the server's processes know. On a
 * busy machine the kernel then runs the light requests first, and a one-document GET no longer
 * waits behind a scan for its share of a core.
 */

/** Where the lane listens, and the token its requests carry (random per start). */
export interface LaneAddress {
  socketPath: string;
  token: string;
}

/** The headers a forwarded request carries: the client's socket address and TLS, as the serving worker saw them. */
const PEER = 'x-divan-lane-peer';
const SECURE = 'x-divan-lane-secure';
const TOKEN = 'x-divan-lane-token';

/** Hop-by-hop headers: they describe one connection and are not forwarded either way. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'expect']);

/** How long a request shape stays marked heavy after it last was. */
const MARK_MS = 30_000;
/** How long the serving workers stop forwarding after the lane could not be reached. */
const DOWN_MS = 5_000;
/** Shapes remembered at most (oldest out). */
const MAX_MARKS = 1000;

interface HeavyLaneOptions {
  address: LaneAddress;
  /** Slices (4 ms turns) that make a request heavy. */
  slices: () => number;
}

export class HeavyLane {
  readonly #options: HeavyLaneOptions;
  readonly #agent: Agent;
  readonly #marks = new Map<string, number>();
  #downUntil = 0;

  constructor(options: HeavyLaneOptions) {
    this.#options = options;
    this.#agent = new Agent({ socketPath: options.address.socketPath, keepAlive: true } as ConstructorParameters<typeof Agent>[0]);
  }

  /** Whether the request goes to the lane: its shape was heavy lately and the lane is up. */
  takes(req: IncomingMessage, now = Date.now()): boolean {
    if (this.#marks.size === 0 || now < this.#downUntil) return false;
    const until = this.#marks.get(shapeOf(req));
    return until !== undefined && until > now;
  }

  /** After a request was answered here: marks its shape heavy when its loops gave `slices` turns or more. */
  learn(req: IncomingMessage, slices: number, now = Date.now()): void {
    if (slices < this.#options.slices()) return;
    const shape = shapeOf(req);
    this.#marks.delete(shape);
    if (this.#marks.size >= MAX_MARKS) this.#marks.delete(this.#marks.keys().next().value!);
    this.#marks.set(shape, now + MARK_MS);
  }

  /**
   * Sends the request to the lane and its answer back. A lane that cannot be reached before the
   * request body was read lets `fallback` answer here (and is not tried again for a few seconds).
   */
  forward(req: IncomingMessage, res: ServerResponse, fallback: () => Promise<void>): Promise<void> {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP.has(name) && value !== undefined) headers[name] = value;
    headers[PEER] = req.socket.remoteAddress ?? '';
    headers[SECURE] = (req.socket as TLSSocket).encrypted === true ? '1' : '0';
    headers[TOKEN] = this.#options.address.token;
    return new Promise<void>((resolve) => {
      let answered = false;
      const out = httpRequest({ agent: this.#agent, method: req.method, path: req.url, headers }, (answer) => {
        answered = true;
        const raw: string[] = [];
        for (let i = 0; i < answer.rawHeaders.length; i += 2) if (!HOP.has(answer.rawHeaders[i]!.toLowerCase())) raw.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
        res.writeHead(answer.statusCode ?? 502, raw);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
        res.once('close', resolve);
      });
      let sent = false;
      out.once('error', () => {
        // The client went away (this worker ended the forwarded request): nobody to answer.
        if (res.destroyed || res.writableFinished) return resolve();
        if (answered) return void res.destroy();
        this.#downUntil = Date.now() + DOWN_MS;
        req.unpipe(out);
        // Nothing of the request was read yet (or it had no body): this worker answers it instead.
        if (!sent || !hasBody(req)) return void fallback().then(resolve, resolve);
        const failure = serviceUnavailable('The process answering this request stopped; send it again.');
        res.writeHead(failure.status, { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate' });
        res.end(`${JSON.stringify(failure.toJSON())}\n`);
        resolve();
      });
      // The body is read only once the lane is connected, so that a lane that cannot be reached leaves it unread.
      out.once('socket', (socket) => {
        const send = (): void => {
          sent = true;
          req.pipe(out);
        };
        if (socket.connecting) socket.once('connect', send);
        else send();
      });
      res.once('close', () => {
        if (!res.writableFinished) out.destroy();
      });
    });
  }
}

/** Whether a request carries a body (one the lane may have read part of). */
const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** A request's shape: its method and URL as sent (clients repeat their queries byte for byte). */
const shapeOf = (req: IncomingMessage): string => `${req.method ?? 'GET'} ${req.url ?? '/'}`;

/**
 * On the lane: the client's socket address and TLS of a forwarded request, read from the headers
 * the serving worker set, which are then removed (the endpoints never see them); undefined for a
 * request without a valid token (another local process cannot pose as a forwarded client).
 */
export function laneOrigin(req: IncomingMessage, token: string): { socketAddress: string; secure: boolean } | undefined {
  const given = req.headers[TOKEN];
  const peer = req.headers[PEER];
  const secure = req.headers[SECURE];
  delete req.headers[TOKEN];
  delete req.headers[PEER];
  delete req.headers[SECURE];
  if (typeof given !== 'string' || typeof peer !== 'string') return undefined;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
  return { socketAddress: peer, secure: secure === '1' };
}
