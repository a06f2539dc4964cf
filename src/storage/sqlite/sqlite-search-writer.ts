/**
 * Where a SQLite search index's batches are stored: a thread of its own (sqlite-search-writer-thread.ts),
 * started on the first batch, so that storing one batch (its FTS5 rows, most of a build's cost)
 * runs beside the main thread reading and running the next. Batches go in order, one at a time
 * (the write queue sends one while it holds the write lease); a thread that fails is replaced, and
 * the batches it had fail with it.
 */
import { Worker } from 'node:worker_threads';
import type { SearchDocument } from '../search-store.js';
import type { SearchBatch, SearchBatchAnswer } from './sqlite-search-writer-thread.js';

interface Waiting {
  resolve(): void;
  reject(error: Error): void;
}

export class SearchWriter {
  readonly #file: string;
  #worker: Worker | undefined;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;

  constructor(file: string) {
    this.#file = file;
  }

  update(index: number, documents: readonly SearchDocument[], updateSeq: number): Promise<void> {
    const worker = this.#worker ?? this.#start();
    const id = ++this.#next;
    return new Promise<void>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, index, documents, updateSeq } satisfies SearchBatch);
    });
  }

  #start(): Worker {
    const worker = new Worker(new URL('./sqlite-search-writer-thread.js', import.meta.url), { workerData: { file: this.#file } });
    worker.unref();
    worker.on('message', (answer: SearchBatchAnswer) => {
      const waiting = this.#waiting.get(answer.id);
      this.#waiting.delete(answer.id);
      if (answer.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(answer.error));
    });
    const failed = (reason: string): void => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const waiting of this.#waiting.values()) waiting.reject(new Error(reason));
      this.#waiting.clear();
    };
    worker.on('error', (error) => failed(`the search writer failed: ${error.message}`));
    worker.on('exit', () => failed('the search writer stopped'));
    this.#worker = worker;
    return worker;
  }

  /** Stops the thread; batches still waiting fail. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }
}
