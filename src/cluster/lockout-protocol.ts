/**
 * The lockout messages of the IPC channel between a worker and the primary (see
 * worker-protocol.ts for the others). With several workers the `enforce` lockout of the node is
 * the primary's (lockout-service.ts): a worker asks it to admit a password attempt (`lockout-admit`,
 * under a number of its own, with the settings and the failures it knows of), the primary answers
 * `lockout-admitted` once the attempt may run, and the worker ends it with `lockout-settle`.
 */
import type { LockoutSettings } from '../users/lockout.js';

export type LockoutRequest =
  | {
      divan: 'lockout-admit';
      attempt: number;
      peer: string;
      name: string;
      salt: string;
      /** Failures the asking worker knows of for this key (other nodes' included). */
      known: number;
      settings: Omit<LockoutSettings, 'mode'>;
    }
  | { divan: 'lockout-settle'; attempt: number; failed: boolean };

export type LockoutAnswer = { divan: 'lockout-admitted'; attempt: number; locked: boolean };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function asSettings(value: unknown): Omit<LockoutSettings, 'mode'> | undefined {
  if (!isObject(value)) return undefined;
  const { threshold, maxObjects, maxLifetimeMs } = value;
  return isCount(threshold) && isCount(maxObjects) && isCount(maxLifetimeMs) ? { threshold, maxObjects, maxLifetimeMs } : undefined;
}

export function asLockoutRequest(value: unknown): LockoutRequest | undefined {
  if (!isObject(value) || !isCount(value['attempt'])) return undefined;
  const attempt = value['attempt'];
  if (value['divan'] === 'lockout-settle') return typeof value['failed'] === 'boolean' ? { divan: 'lockout-settle', attempt, failed: value['failed'] } : undefined;
  if (value['divan'] !== 'lockout-admit') return undefined;
  const { peer, name, salt, known } = value;
  const settings = asSettings(value['settings']);
  if (typeof peer !== 'string' || typeof name !== 'string' || typeof salt !== 'string' || !isCount(known) || settings === undefined) return undefined;
  return { divan: 'lockout-admit', attempt, peer, name, salt, known, settings };
}

export function asLockoutAnswer(value: unknown): LockoutAnswer | undefined {
  if (!isObject(value) || value['divan'] !== 'lockout-admitted' || !isCount(value['attempt']) || typeof value['locked'] !== 'boolean') return undefined;
  return { divan: 'lockout-admitted', attempt: value['attempt'], locked: value['locked'] };
}
