interface WorkQueueLimits {
  /** Tasks run at once. */
  concurrency: number;
  /** Tasks that may wait for a place; one more is refused. */
  maxWaiting: number;
}

/**
 * Runs at most `concurrency` tasks at once and lets at most `maxWaiting` more wait, first come
 * first served; a task beyond that is refused at once with `refusal()`, before any work is done.
 * A place is handed straight from a finishing task to the first waiting one, so a newcomer can
 * never overtake the waiting list.
 */
export class WorkQueue {
  #limits: WorkQueueLimits;
  readonly #refusal: () => Error;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #completed = 0;

  constructor(limits: WorkQueueLimits, refusal: () => Error) {
    this.#limits = normalise(limits);
    this.#refusal = refusal;
  }

  /** New limits apply at once: a higher concurrency starts waiting tasks, a lower one lets running tasks finish. */
  configure(limits: WorkQueueLimits): void {
    this.#limits = normalise(limits);
    while (this.#running < this.#limits.concurrency && this.#waiting.length > 0) {
      this.#running++;
      this.#waiting.shift()!();
    }
  }

  /**
   * Runs `task` when a place is free. `neverRefuse` is for work only administrators can cause
   * (hashing `[admins]` passwords): it may wait beyond `maxWaiting` rather than be lost.
   */
  async run<T>(task: () => Promise<T>, options: { neverRefuse?: boolean } = {}): Promise<T> {
    if (this.#running < this.#limits.concurrency) {
      this.#running++;
    } else {
      if (!options.neverRefuse && this.#waiting.length >= this.#limits.maxWaiting) throw this.#refusal();
      await new Promise<void>((start) => this.#waiting.push(start));
    }
    try {
      return await task();
    } finally {
      this.#completed++;
      this.#release();
    }
  }

  #release(): void {
    const next = this.#running <= this.#limits.concurrency ? this.#waiting.shift() : undefined;
    if (next) next();
    else this.#running--;
  }

  /** Tasks running, waiting, and finished so far (for tests and diagnostics). */
  get stats(): { running: number; waiting: number; completed: number } {
    return { running: this.#running, waiting: this.#waiting.length, completed: this.#completed };
  }
}

function normalise(limits: WorkQueueLimits): WorkQueueLimits {
  return {
    concurrency: Math.max(1, Math.floor(limits.concurrency) || 1),
    maxWaiting: Math.max(0, Math.floor(limits.maxWaiting) || 0),
  };
}
