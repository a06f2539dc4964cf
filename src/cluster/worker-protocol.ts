import type { GatherToPrimary, GatherToWorker } from './gather-protocol.js';
import { asLockRequest, type LockRequest } from './lock-protocol.js';
import { asLockoutRequest, type LockoutRequest } from './lockout-protocol.js';

/**
 * What the primary process and its workers say to each other over the IPC channel node:cluster
 * gives them. Cluster messages go worker → primary (`publish`), primary → every other worker
 * (`relay`), each worker answers `delivered` once it applied one, and the primary tells the
 * publisher `published` once every live worker did (every worker that said `ready`: one still
 * loading its code could not hear a message). `listening` reports a worker's bound address.
 * Gathering answers from every worker has its own messages (gather-protocol.ts).
 * Named locks (`lock`, `unlock`, `granted`) are in lock-protocol.ts, the node's lockout in
 * lockout-protocol.ts.
 */

export type ToPrimary =
  | GatherToPrimary
  /** The worker listens for cluster messages (it keeps those that come before it can apply them). */
  | { divan: 'ready' }
  | { divan: 'publish'; seq: number; topic: string; payload: string }
  | { divan: 'delivered'; relay: number }
  | { divan: 'listening'; address: string; port: number; tls: boolean }
  | LockRequest
  | LockoutRequest;

export type ToWorker =
  | GatherToWorker
  | { divan: 'relay'; relay: number; topic: string; payload: string; from: string }
  | { divan: 'published'; seq: number };

/** The worker's end of the channel (in main.ts: `process.send` and `process.on('message')`). */
export interface WorkerChannel {
  /** This worker's name among its siblings, unique for the life of the primary. */
  readonly id: string;
  send(message: ToPrimary): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Once, when the channel closes (the primary is gone or is stopping this worker). */
  onClose(listener: () => void): void;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The protocol message `value` is, or undefined for anything else on the channel. */
export function asToWorker(value: unknown): ToWorker | undefined {
  if (!isObject(value)) return undefined;
  if (value['divan'] === 'published' && typeof value['seq'] === 'number') return value as ToWorker;
  if (value['divan'] === 'relay' && typeof value['relay'] === 'number' && typeof value['topic'] === 'string' && typeof value['payload'] === 'string' && typeof value['from'] === 'string') {
    return value as ToWorker;
  }
  return undefined;
}

export function asToPrimary(value: unknown): ToPrimary | undefined {
  if (!isObject(value)) return undefined;
  switch (value['divan']) {
    case 'ready':
      return { divan: 'ready' };
    case 'publish':
      return typeof value['seq'] === 'number' && typeof value['topic'] === 'string' && typeof value['payload'] === 'string' ? (value as ToPrimary) : undefined;
    case 'delivered':
      return typeof value['relay'] === 'number' ? (value as ToPrimary) : undefined;
    case 'listening':
      return typeof value['address'] === 'string' && typeof value['port'] === 'number' ? (value as ToPrimary) : undefined;
    case 'lockout-admit':
    case 'lockout-settle':
      return asLockoutRequest(value);
    default:
      return asLockRequest(value);
  }
}
