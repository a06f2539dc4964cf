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
interface CookieSubject {
  name: string;
  salt: string;
  /** Seconds since the epoch at which the presented cookie was minted (cookie handler only). */
  issuedAt?: number;
}

export interface AuthHandler {
  /** The name shown in `info.authenticated` / `info.authentication_handlers`: `cookie`, `default`, … */
  readonly name: string;
  /**
   * A handler may answer without a promise when it has everything in memory (the chain then
   * needs none either); it may then also throw its refusal at once.
   */
  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome>;
  /**
   * False only when `authenticate` would answer "not mine" at once, without any other effect (the
   * request has no header of this handler's kind): the chain then skips the call, which saves a
   * few promises per handler on every request. Absent: always called.
   */
  mayAnswer?(request: AuthRequest): boolean;
  /**
   * Epoch milliseconds at which the credential this handler accepted (`outcome`, for `request`)
   * stops being valid; undefined when it does not expire. Absent: credentials sent with every request.
   */
  credentialExpiry?(request: AuthRequest, outcome: NonNullable<AuthOutcome>): number | undefined;
}

export interface Authenticated {
  userCtx: UserCtx;
  /** Name of the handler that authenticated the request; undefined for anonymous. */
  handler?: string;
  cookieSubject?: CookieSubject;
  /**
   * When the presented credential stops being valid (epoch milliseconds; a cookie's issue time
   * plus `[chttpd_auth] timeout`, a JWT's `exp`), worked out only when asked: a long-lived answer
   * (a live `_changes` feed) ends then. Absent or undefined: it does not expire.
   */
  credentialExpiry?: () => number | undefined;
}

/**
 * The `[chttpd_auth]` signing secrets as the proxy handler reads them (CookieService keeps them):
 * the secrets a token may be signed with (more than one while a replaced secret is in its grace
 * period), the hash names allowed, and a counter that changes whenever either changes, so that
 * remembered verifications can be dropped.
 */
export interface SigningSecrets {
  readonly generation: number;
  /** Without a promise while the secrets are in memory (the common case). */
  verificationSecrets(): string[] | Promise<string[]>;
  algorithms(): readonly string[];
}
