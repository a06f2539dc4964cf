/**
 * Worker side of an exchange: a running call (a list function asking for its next rows) sends a
 * message to the main thread and waits, blocked, for the answer. The call is synchronous JavaScript
 * inside QuickJS, so the worker's event loop cannot run meanwhile: the answer comes on a channel of
 * its own, read with `receiveMessageOnPort`, and the main thread wakes the worker with
 * `Atomics.notify` on a shared word. Answers carry the sequence number of their message, so one
 * that comes after its call gave up is dropped, never taken for a later call's.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { ExchangeAnswer, WorkerStart } from './protocol.js';

/**
 * How long (ms) a call waits for one answer: the main thread answers once it has read the next
 * rows and the client took the output so far, so a client that stops reading holds a worker this
 * long at most before its list fails.
 */
const EXCHANGE_WAIT_MS = 60_000;

export class ExchangeWait {
  readonly #port: MessagePort;
  readonly #flag: Int32Array;
  #seq = 0;

  constructor(start: WorkerStart) {
    this.#port = start.exchangePort;
    this.#flag = new Int32Array(start.exchangeFlag);
  }

  /** Sends `text` with `send` and returns the main thread's answer; throws past EXCHANGE_WAIT_MS. */
  exchange(text: string, send: (seq: number, text: string) => void): string {
    const seq = ++this.#seq;
    Atomics.store(this.#flag, 0, 0);
    send(seq, text);
    const deadline = Date.now() + EXCHANGE_WAIT_MS;
    for (;;) {
      const received = receiveMessageOnPort(this.#port);
      if (received !== undefined) {
        const answer = received.message as ExchangeAnswer;
        if (answer.seq === seq) return answer.text;
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`The server gave no answer to the function for ${EXCHANGE_WAIT_MS} ms.`);
      Atomics.wait(this.#flag, 0, 0, left);
      Atomics.store(this.#flag, 0, 0);
    }
  }
}
