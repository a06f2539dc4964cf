/** Authentication methods and outcomes counted by `divan_auth_requests_total` (docs/operations.md). */
export const AUTH_METHODS = ['basic', 'cookie', 'proxy', 'jwt'] as const;
export const AUTH_OUTCOMES = ['success', 'wrong_password', 'lockout', 'bad_token'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export type AuthOutcome = (typeof AUTH_OUTCOMES)[number];

/** What the authentication handlers report: one outcome per attempt that presented credentials. */
export interface AuthOutcomes {
  authOutcome(method: AuthMethod, outcome: AuthOutcome): void;
}
