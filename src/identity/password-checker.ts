/**
 * What the Basic and cookie handlers need from whoever checks passwords (users/ implements it), so
 * that auth/ never depends on how users, admins, lockout or hashes are kept.
 */

/** How a password reached the server; lockout and TOTP rules differ between them. */
export type PasswordChannel = 'basic' | 'session';

export interface AuthenticatedUser {
  roles: string[];
  /** The salt of the stored hash: cookies are keyed by it, so a password change ends them. */
  salt: string;
  /** The user document carries a TOTP secret (second factor required on /_session, and checked). */
  hasTotp: boolean;
}

/** What a name currently stands for: a cookie is valid only while the salt it was signed with is still the user's. */
export interface KnownUser {
  roles: string[];
  hash: { salt: string };
}

export interface PasswordChecker {
  /**
   * Resolves to the user when the password (and, on `session`, the TOTP `token`) is right; otherwise
   * throws the CouchError to answer (401 for a wrong password, 403 for a locked account).
   */
  authenticate(name: string, password: string, peer: string, channel: PasswordChannel, token?: string): Promise<AuthenticatedUser>;
  /**
   * The same check, answered without a promise when nothing needs waiting for (everything it
   * needs is in memory); a refusal is then thrown at once.
   */
  check(name: string, password: string, peer: string, channel: PasswordChannel, token?: string): AuthenticatedUser | Promise<AuthenticatedUser>;
  /**
   * The user's current roles and salt, without checking any password; undefined for an unknown
   * name. Answered without a promise when it is in memory (a repeated cookie).
   */
  resolve(name: string): KnownUser | undefined | Promise<KnownUser | undefined>;
}
