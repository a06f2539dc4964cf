import type { Storage } from '../../storage/storage.js';
import type { SharedSecret } from './cookie-service.js';

/**
 * A database that HTTP cannot reach (its name is not a legal database name), holding state the
 * nodes of a cluster share.
 */
const CLUSTER_DB = '_divan_cluster';
const SECRET_DOC = '_local/cookie-secret';
const ADMIN_ONLY = { members: { roles: ['_admin'] }, admins: { roles: ['_admin'] } };

/** The generated cookie secret, kept in the shared store so that every node signs and verifies alike. */
export function storedSecret(storage: Storage, onCreated: () => void): SharedSecret {
  let ready: Promise<unknown> | undefined;
  const ensureDb = (): Promise<unknown> => (ready ??= storage.createDatabase(CLUSTER_DB, ADMIN_ONLY));
  const load = async (): Promise<string | undefined> => {
    await ensureDb();
    const doc = await storage.getLocal(CLUSTER_DB, SECRET_DOC);
    const secret = doc?.body['secret'];
    return typeof secret === 'string' && secret !== '' ? secret : undefined;
  };
  return {
    load,
    async loadOrCreate(candidate: string): Promise<string> {
      const existing = await load();
      if (existing !== undefined) return existing;
      // putLocal without a revision only succeeds for the first writer; the others read its secret.
      const written = await storage.putLocal(CLUSTER_DB, SECRET_DOC, { secret: candidate }, undefined);
      if (written.ok) {
        onCreated();
        return candidate;
      }
      const winner = await load();
      if (winner === undefined) throw new Error('the shared cookie secret could not be stored');
      return winner;
    },
  };
}
