import { badRequest } from '../../errors/catalog.js';
import type { AuthenticatedUser, PasswordChecker } from '../../identity/password-checker.js';
import type { AuthHandler, AuthOutcome, AuthRequest } from '../types.js';
import { parseBasicHeader } from '../basic-header.js';

/** `default_authentication_handler`: Basic credentials against admins and users. */
export class BasicHandler implements AuthHandler {
  readonly name = 'default';
  readonly #authenticator: PasswordChecker;

  constructor(authenticator: PasswordChecker) {
    this.#authenticator = authenticator;
  }

  mayAnswer(request: AuthRequest): boolean {
    // parseBasicHeader's own first test: without this prefix it finds no credentials.
    return request.headers.authorization?.startsWith('Basic ') === true;
  }

  /** At once (no promise) when the password check is (see PasswordChecker.check): repeated requests. */
  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome> {
    const parsed = parseBasicHeader(request.headers.authorization);
    if (parsed.kind === 'none') return undefined;
    if (parsed.kind === 'invalid') throw badRequest('Authorization header has invalid base64 value');
    const { name } = parsed;
    const user = this.#authenticator.check(name, parsed.password, request.peer, 'basic');
    return user instanceof Promise ? user.then((checked) => outcomeFor(name, checked)) : outcomeFor(name, user);
  }
}

function outcomeFor(name: string, user: AuthenticatedUser): AuthOutcome {
  return { userCtx: { name, roles: user.roles }, cookieSubject: { name, salt: user.salt } };
}
