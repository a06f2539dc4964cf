import type { Worker } from 'node:cluster';
import { Lockout, type LockoutTicket } from '../users/lockout.js';
import type { LockoutAnswer, LockoutRequest } from './lockout-protocol.js';

/**
 * The primary's side of the `[chttpd_auth_lockout]` of a server with several workers: one
 * `Lockout` for the whole node, so that failures and attempts in flight are counted once however
 * many workers take the guesses (each worker used to admit `threshold` guesses of its own), and
 * a worker started to replace a dead one finds the node's counts here. A worker that dies or whose
 * channel closes ends its attempts without a failure, so those waiting behind them go on.
 */
export class LockoutService {
  readonly #lockout = new Lockout({ mode: 'enforce', threshold: 0, maxObjects: 0, maxLifetimeMs: 0 });
  /** Worker id → its admitted attempts by number. */
  readonly #tickets = new Map<number, Map<number, LockoutTicket>>();

  handle(worker: Worker, message: LockoutRequest): void {
    if (message.divan === 'lockout-settle') {
      const mine = this.#tickets.get(worker.id);
      mine?.get(message.attempt)?.settle(message.failed);
      mine?.delete(message.attempt);
      return;
    }
    // Every worker has the node's settings (configuration changes reach all of them); the asker's are the latest.
    this.#lockout.configure({ mode: 'enforce', ...message.settings });
    void this.#lockout.admit(message.peer, message.name, message.salt, message.known).then((ticket) => {
      if (!worker.isConnected()) return ticket.settle(false);
      // A locked attempt holds no place: it ends with its 403, never settled.
      if (ticket.locked) return this.#answer(worker, { divan: 'lockout-admitted', attempt: message.attempt, locked: true });
      let mine = this.#tickets.get(worker.id);
      if (mine === undefined) this.#tickets.set(worker.id, (mine = new Map()));
      mine.set(message.attempt, ticket);
      this.#answer(worker, { divan: 'lockout-admitted', attempt: message.attempt, locked: false });
    });
  }

  #answer(worker: Worker, answer: LockoutAnswer): void {
    worker.send(answer, (error: Error | null) => (error ? this.forget(worker) : undefined));
  }

  /** Ends every attempt of `worker` without a failure (it died or disconnected). */
  forget(worker: Worker): void {
    const mine = this.#tickets.get(worker.id);
    this.#tickets.delete(worker.id);
    for (const ticket of mine?.values() ?? []) ticket.settle(false);
  }
}
