import { Worker } from 'node:worker_threads';
import type { Pbkdf2Answer, Pbkdf2Job } from './pbkdf2-thread.js';

/**
 * PBKDF2 on threads of our own at a lower CPU priority (`[chttpd_auth] pbkdf2_nice`), instead of the
 * libuv pool at the event loop's priority. One 600000-iteration derivation is ~180 ms of CPU; on a
 * machine whose cores all serve requests, a burst of cold logins used to take CPU time from every
 * event loop alike (cookie p99 > 100 ms during 8 logins on 2 cores). Niced, the derivations use what
 * the event loops leave: requests keep their latency, logins take longer only while the machine is
 * saturated. Threads are started on demand (the caller, `pbkdf2Queue`, bounds how many run at once)
 * and kept, unreferenced, so an idle server can still exit.
 */
export class Pbkdf2Threads {
  readonly #idle: Worker[] = [];
  readonly #all = new Set<Worker>();

  derive(job: Pbkdf2Job): Promise<Buffer> {
    const worker = this.#idle.pop() ?? this.#spawn();
    worker.ref();
    return new Promise<Buffer>((resolve, reject) => {
      const settle = (answer: Pbkdf2Answer | Error): void => {
        worker.off('message', settle);
        worker.off('error', settle);
        if (answer instanceof Error) {
          this.#all.delete(worker);
          void worker.terminate();
          reject(answer);
          return;
        }
        worker.unref();
        this.#idle.push(worker);
        if ('error' in answer) reject(new TypeError(answer.error));
        else resolve(Buffer.from(answer.key.buffer, answer.key.byteOffset, answer.key.byteLength));
      };
      worker.on('message', settle);
      worker.on('error', settle);
      worker.postMessage(job);
    });
  }

  #spawn(): Worker {
    const worker = new Worker(new URL('./pbkdf2-thread.js', import.meta.url));
    this.#all.add(worker);
    worker.on('exit', () => {
      this.#all.delete(worker);
      const at = this.#idle.indexOf(worker);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    return worker;
  }

  /** Threads started so far and still alive (for tests). */
  get size(): number {
    return this.#all.size;
  }

  async close(): Promise<void> {
    const workers = [...this.#all];
    this.#all.clear();
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
