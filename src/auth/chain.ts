import { authenticationRequired, userNameRefused } from '../errors/catalog.js';
import { ANONYMOUS } from '../identity/user-ctx.js';
import type { AuthHandler, AuthOutcome, AuthRequest, Authenticated } from './types.js';
import { isAcceptableUserName } from '../identity/user-name.js';

interface ChainPolicy {
  requireValidUser: boolean;
  requireValidUserExceptForUp: boolean;
}

/**
 * Runs the configured handlers in order; the first one that answers with a user context wins.
 * When none does, the request is anonymous, or 401 when `require_valid_user` applies (CouchDB's
 * final "party mode" step, without the admin party: Divan always has an admin).
 */
export class AuthChain {
  readonly handlers: readonly AuthHandler[];

  constructor(handlers: readonly AuthHandler[]) {
    this.handlers = handlers;
  }

  get handlerNames(): string[] {
    return this.handlers.map((handler) => handler.name);
  }

  /**
   * Without a promise while every handler asked answers without one (a repeated Basic request,
   * an anonymous one), so the common request costs none; refusals are always a rejected promise.
   */
  authenticate(request: AuthRequest, policy: ChainPolicy): Authenticated | Promise<Authenticated> {
    try {
      return this.#from(0, request, policy);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #from(first: number, request: AuthRequest, policy: ChainPolicy): Authenticated | Promise<Authenticated> {
    for (let index = first; index < this.handlers.length; index++) {
      const handler = this.handlers[index]!;
      if (handler.mayAnswer !== undefined && !handler.mayAnswer(request)) continue;
      const outcome = handler.authenticate(request);
      if (outcome instanceof Promise) {
        return outcome.then((settled) => (settled ? accepted(handler, settled, request) : this.#from(index + 1, request, policy)));
      }
      if (outcome) return accepted(handler, outcome, request);
    }
    if (requiresAuthentication(request, policy)) throw authenticationRequired();
    return { userCtx: { name: ANONYMOUS.name, roles: [] } };
  }
}

function accepted(handler: AuthHandler, outcome: NonNullable<AuthOutcome>, request: AuthRequest): Authenticated {
  // Every handler's name passes the same character rule (JWT `sub` and proxy headers are the
  // ones that could carry anything): 400, never a user context the rest of Divan must distrust.
  if (outcome.userCtx.name !== null && !isAcceptableUserName(outcome.userCtx.name)) throw userNameRefused();
  const authenticated: Authenticated = { userCtx: outcome.userCtx, handler: handler.name, cookieSubject: outcome.cookieSubject };
  if (handler.credentialExpiry !== undefined) authenticated.credentialExpiry = () => handler.credentialExpiry!(request, outcome);
  return authenticated;
}

/** CouchDB's truth table: POST /_session is always open so that users can log in. */
function requiresAuthentication(request: AuthRequest, policy: ChainPolicy): boolean {
  const first = request.segments[0];
  if (first === '_session' && request.segments.length === 1 && request.method === 'POST') return false;
  if (first === '_up' && request.segments.length === 1) {
    return policy.requireValidUser && !policy.requireValidUserExceptForUp;
  }
  return policy.requireValidUser || policy.requireValidUserExceptForUp;
}
