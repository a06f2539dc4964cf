import { badRequest } from '../../errors/catalog.js';
import type { PasswordChecker } from '../../identity/password-checker.js';
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

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    const header = request.headers.authorization;
    const parsed = parseBasicHeader(header);
    if (parsed.kind === 'none') return undefined;
    if (parsed.kind === 'invalid') throw badRequest('Authorization header has invalid base64 value');
    const user = await this.#authenticator.authenticate(parsed.name, parsed.password, request.peer, 'basic');
    return { userCtx: { name: parsed.name, roles: user.roles }, cookieSubject: { name: parsed.name, salt: user.salt } };
  }
}
