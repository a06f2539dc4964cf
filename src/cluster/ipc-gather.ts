import type { Json } from '../json/json.js';
import { Answerers, type Answerer, type Gather, type Gathered } from './gather.js';
import { asGatherToWorker, type GatherToPrimary } from './gather-protocol.js';
import { GATHER_TIMEOUT_MS } from './gather-hub.js';
import type { WorkerChannel } from './worker-protocol.js';

/** Past the primary's own limit: the primary is gone (the worker is stopping), not slow. */
const ASKER_TIMEOUT_MS = GATHER_TIMEOUT_MS + 2000;

/**
 * A worker's side of gathering (gather.ts) over the IPC channel: it answers the primary's `ask`
 * with its registered answerers, and sends its own questions to the primary (gather-hub.ts).
 * It says `answering` only at `start()`, once the process has wired what it answers about, so a
 * worker still starting is not waited for.
 */
export class IpcGather implements Gather {
  readonly #channel: WorkerChannel;
  readonly #answerers = new Answerers();
  readonly #waiting = new Map<number, { resolve: (replies: Gathered[]) => void; timer: NodeJS.Timeout; local: () => Promise<Gathered[]> }>();
  #seq = 0;
  #closed = false;

  constructor(channel: WorkerChannel) {
    this.#channel = channel;
    channel.onMessage((value) => this.#received(value));
  }

  answer(topic: string, answerer: Answerer): void {
    this.#answerers.set(topic, answerer);
  }

  start(): void {
    this.#send({ divan: 'answering' });
  }

  gather(topic: string, payload: Json = null): Promise<Gathered[]> {
    const local = async (): Promise<Gathered[]> => [{ worker: this.#channel.id, value: await this.#answerers.answer(topic, payload) }];
    if (this.#closed) return local();
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#settle(seq, undefined), ASKER_TIMEOUT_MS);
      timer.unref();
      this.#waiting.set(seq, { resolve, timer, local });
      this.#send({ divan: 'gather', seq, topic, payload });
    });
  }

  /** Resolves a question with the primary's replies, or (no primary) with this process's own answer. */
  #settle(seq: number, replies: Gathered[] | undefined): void {
    const waiting = this.#waiting.get(seq);
    if (!waiting) return;
    this.#waiting.delete(seq);
    clearTimeout(waiting.timer);
    if (replies) waiting.resolve(replies);
    else void waiting.local().then(waiting.resolve, () => waiting.resolve([]));
  }

  #received(value: unknown): void {
    const message = asGatherToWorker(value);
    if (message?.divan === 'gathered') this.#settle(message.seq, message.replies);
    else if (message?.divan === 'ask') {
      this.#answerers.answer(message.topic, message.payload).then(
        (answer) => this.#send({ divan: 'answer', gather: message.gather, value: answer }),
        (error: unknown) => this.#send({ divan: 'answer', gather: message.gather, error: (error as Error).message }),
      );
    }
  }

  #send(message: GatherToPrimary): void {
    if (this.#closed) return;
    try {
      this.#channel.send(message);
    } catch {
      // The primary is gone: this worker is being stopped.
    }
  }

  close(): void {
    this.#closed = true;
    for (const seq of [...this.#waiting.keys()]) this.#settle(seq, undefined);
  }
}
