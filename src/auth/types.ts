import type { IncomingHttpHeaders } from 'node:http';
import type { UserCtx } from '../identity/user-ctx.js';

/** What a handler may look at: no body, no response, so handlers stay pure decisions. */
export interface AuthRequest {
  method: string;
  /** Decoded path segments. */
  segments: readonly string[];
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Client address after the trusted-proxy rule. */
  peer: string;
  /** The connection itself is TLS. */
  secure: boolean;
}

/** A handler's answer: undefined means "not mine, ask the next one". Failures are thrown CouchErrors. */
export type AuthOutcome = undefined | { userCtx: UserCtx; cookieSubject?: CookieSubject };

/** Enough to mint or refresh an AuthSession cookie for the authenticated user. */
export interface CookieSubject {
  name: string;
  salt: string;
  /** Seconds since the epoch at which the presented cookie was minted (cookie handler only). */
  issuedAt?: number;
}

export interface AuthHandler {
  /** The name shown in `info.authenticated` / `info.authentication_handlers`: `cookie`, `default`, … */
  readonly name: string;
  authenticate(request: AuthRequest): Promise<AuthOutcome>;
}

export interface Authenticated {
  userCtx: UserCtx;
  /** Name of the handler that authenticated the request; undefined for anonymous. */
  handler?: string;
  cookieSubject?: CookieSubject;
}
