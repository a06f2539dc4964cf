/**
 * The gather messages of the IPC channel (worker-protocol.ts has the others). A worker that can
 * answer says `answering` once; an asker sends `gather`; the primary sends `ask` to every answering
 * worker (the asker too), each replies `answer` (a value, or an error message), and the primary
 * sends the asker `gathered` with the replies it got in time.
 */
import type { Json } from '../json/json.js';
import type { Gathered } from './gather.js';

export type GatherToPrimary =
  | { divan: 'answering' }
  | { divan: 'gather'; seq: number; topic: string; payload: Json }
  | { divan: 'answer'; gather: number; value?: Json; error?: string };

export type GatherToWorker =
  | { divan: 'ask'; gather: number; topic: string; payload: Json }
  | { divan: 'gathered'; seq: number; replies: Gathered[] };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

export function asGatherToPrimary(value: unknown): GatherToPrimary | undefined {
  if (!isObject(value)) return undefined;
  switch (value['divan']) {
    case 'answering':
      return { divan: 'answering' };
    case 'gather':
      return typeof value['seq'] === 'number' && typeof value['topic'] === 'string' ? (value as GatherToPrimary) : undefined;
    case 'answer':
      return typeof value['gather'] === 'number' ? (value as GatherToPrimary) : undefined;
    default:
      return undefined;
  }
}

export function asGatherToWorker(value: unknown): GatherToWorker | undefined {
  if (!isObject(value)) return undefined;
  if (value['divan'] === 'ask' && typeof value['gather'] === 'number' && typeof value['topic'] === 'string') return value as GatherToWorker;
  if (value['divan'] === 'gathered' && typeof value['seq'] === 'number' && Array.isArray(value['replies'])) return value as GatherToWorker;
  return undefined;
}
