/**
 * One PBKDF2 thread (pbkdf2-threads.ts): derives one key at a time, synchronously, at the nice value
 * each job names. Linux keeps nice values per thread, so only this thread yields the CPU to the
 * event loops; elsewhere `setPriority` may fail and the job simply runs at normal priority.
 */
import { pbkdf2Sync } from 'node:crypto';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';

export interface Pbkdf2Job {
  password: string;
  salt: string;
  iterations: number;
  length: number;
  digest: string;
  nice: number;
}

export type Pbkdf2Answer = { key: Uint8Array } | { error: string };

let currentNice = 0;

function adoptNice(nice: number): void {
  if (nice === currentNice) return;
  try {
    setPriority(0, nice);
    currentNice = nice;
  } catch {
    // Not permitted here (raising priority back needs privileges): keep what we have.
  }
}

parentPort?.on('message', (job: Pbkdf2Job) => {
  adoptNice(job.nice);
  let answer: Pbkdf2Answer;
  try {
    const key = pbkdf2Sync(Buffer.from(job.password, 'utf8'), Buffer.from(job.salt, 'utf8'), job.iterations, job.length, job.digest);
    answer = { key };
  } catch (error) {
    answer = { error: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
