import { accountLocked } from '../errors/catalog.js';
import { isCouchError } from '../errors/couch-error.js';
import type { AuthMethod, AuthOutcome, AuthOutcomes } from '../metrics/auth-outcomes.js';
import type { AuthHandler, AuthOutcome as HandlerOutcome } from './types.js';

const LOCKED_REASON = accountLocked().reason;

/** What a refused attempt counts as: a lockout, or a wrong password (Basic, login) or bad token (the others). */
export function refusalOutcome(method: AuthMethod, error: unknown): AuthOutcome | undefined {
  if (!isCouchError(error)) return undefined;
  if (error.status === 403 && error.reason === LOCKED_REASON) return 'lockout';
  if (error.status >= 500) return undefined;
  return method === 'basic' || (method === 'cookie' && error.status === 401) ? 'wrong_password' : 'bad_token';
}

/**
 * A handler that reports each of its decisions to the metrics: success when it answers with a
 * user, the refusal's kind when it throws; "not mine" (no credentials of its kind) is not counted.
 */
export function instrumented(handler: AuthHandler, method: AuthMethod, outcomes: AuthOutcomes): AuthHandler {
  const refused = (error: unknown): never => {
    const refusal = refusalOutcome(method, error);
    if (refusal) outcomes.authOutcome(method, refusal);
    throw error;
  };
  const succeeded = (outcome: HandlerOutcome): HandlerOutcome => {
    if (outcome) outcomes.authOutcome(method, 'success');
    return outcome;
  };
  return {
    name: handler.name,
    ...(handler.mayAnswer ? { mayAnswer: (request) => handler.mayAnswer!(request) } : {}),
    ...(handler.credentialExpiry ? { credentialExpiry: handler.credentialExpiry.bind(handler) } : {}),
    // Without a promise when the handler answers without one.
    authenticate(request) {
      let outcome: HandlerOutcome | Promise<HandlerOutcome>;
      try {
        outcome = handler.authenticate(request);
      } catch (error) {
        return refused(error);
      }
      return outcome instanceof Promise ? outcome.then(succeeded, refused) : succeeded(outcome);
    },
  };
}
