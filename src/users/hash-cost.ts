import type { Config } from '../config/config.js';
import { DEFAULTS } from '../config/defaults.js';
import { pbkdf2Queue, setPbkdf2Nice } from '../crypto/crypto.js';
import { iterationCountTooHigh } from '../errors/catalog.js';
import type { JsonObject } from '../storage/storage.js';
import type { IterationLimits } from './password-hash.js';
import { own } from './user-json.js';

/**
 * How much PBKDF2 work the server agrees to do: the iterations a stored hash may ask for, and how
 * many derivations run and wait at once (`crypto.ts` `pbkdf2Queue`).
 *
 * CouchDB allows 1e9 iterations, and a user may store a hash of their own: one login then holds a
 * pool thread for about 50 minutes. Divan's default limit is ten times the default `iterations`
 * (600000): room to raise `iterations` tenfold, while the dearest check allowed costs about 2 s.
 */
export const DEFAULT_MAX_ITERATIONS: number = DEFAULTS.chttpd_auth.max_iterations;

/**
 * `[chttpd_auth] min_iterations` and `max_iterations` for checking a stored hash. The maximum never
 * falls below `iterations`, so the hashes this server writes always verify.
 */
export function iterationLimits(config: Config): IterationLimits {
  return {
    min: config.authInteger('min_iterations'),
    max: Math.max(config.authInteger('max_iterations'), config.authInteger('iterations')),
  };
}

/**
 * A non-admin writing their own hash fields (no `password`) may not ask for more iterations than
 * logins would accept: every later login would pay for them. Same 403 as such a login.
 */
export function refuseCostlyHash(doc: JsonObject, maxIterations: number): void {
  const scheme = own(doc, 'password_scheme');
  const iterations = own(doc, 'iterations');
  if ((scheme === 'pbkdf2' || scheme === 'simple+pbkdf2') && typeof iterations === 'number' && iterations > maxIterations) {
    throw iterationCountTooHigh();
  }
}

/** Applies `[chttpd_auth] pbkdf2_concurrency`, `pbkdf2_max_waiting` and `pbkdf2_nice` now and on every change. */
export function followPbkdf2QueueSettings(config: Config): void {
  const apply = (): void => {
    pbkdf2Queue.configure({ concurrency: config.authInteger('pbkdf2_concurrency'), maxWaiting: config.authInteger('pbkdf2_max_waiting') });
    setPbkdf2Nice(config.authInteger('pbkdf2_nice'));
  };
  apply();
  config.onChange((change) => {
    if (change.section === 'chttpd_auth' || change.section === 'couch_httpd_auth') apply();
  });
}
