/**
 * The named-lock messages of the IPC channel between a worker and the primary (see
 * worker-protocol.ts for the others): `lock` asks for lock `name` under a number the worker
 * chose, `granted` answers it when its turn comes, `unlock` gives it up (or withdraws a request
 * still waiting). The primary gives up every lock of a worker whose channel closes.
 */
export type LockRequest = { divan: 'lock'; lock: number; name: string } | { divan: 'unlock'; lock: number };

export type LockGrant = { divan: 'granted'; lock: number };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

export function asLockRequest(value: unknown): LockRequest | undefined {
  if (!isObject(value) || typeof value['lock'] !== 'number') return undefined;
  if (value['divan'] === 'lock' && typeof value['name'] === 'string') return { divan: 'lock', lock: value['lock'], name: value['name'] };
  if (value['divan'] === 'unlock') return { divan: 'unlock', lock: value['lock'] };
  return undefined;
}

export function asLockGrant(value: unknown): LockGrant | undefined {
  if (!isObject(value) || value['divan'] !== 'granted' || typeof value['lock'] !== 'number') return undefined;
  return { divan: 'granted', lock: value['lock'] };
}
