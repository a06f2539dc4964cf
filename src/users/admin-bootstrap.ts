import type { Config } from '../config/config.js';
import { randomHex } from '../crypto/crypto.js';
import type { Admins } from './admins.js';
import { verifyPasswordHash } from './password-hash.js';

type StartupEnvironment = Readonly<Record<string, string | undefined>>;

/** As in the official CouchDB container: these variables create or update an admin and the secret. */
export async function applyEnvironment(config: Config, admins: Admins, env: StartupEnvironment): Promise<void> {
  const secret = env['COUCHDB_SECRET'];
  if (secret && config.authString('secret') !== secret) await config.set('chttpd_auth', 'secret', secret);
  const user = env['COUCHDB_USER'];
  const password = env['COUCHDB_PASSWORD'];
  if (!user || password === undefined) return;
  const hash = admins.hashOf(user);
  // Re-hashing on every start would change the salt and end that admin's cookies.
  if (hash && (await verifyPasswordHash(hash, password, { min: 1, max: Number.MAX_SAFE_INTEGER }))) return;
  await config.set('admins', user, await admins.hashPassword(password));
}

/** Divan never runs as an "admin party": with no admin anywhere, it makes one and returns its password. */
export async function ensureAnAdmin(config: Config, admins: Admins): Promise<string | undefined> {
  if (admins.names().length > 0) return undefined;
  const password = randomHex(12);
  await config.set('admins', 'admin', await admins.hashPassword(password));
  return password;
}
