import type { DatabaseHooks, Written } from '../documents/database-hooks.js';
import type { Logger } from '../log/logger.js';

/**
 * The hooks of every database, in the order app.ts registered them: `beforeDocUpdate` steps run in
 * that order, so a cheap refusal registered first spares a later step's work (a password hash).
 */
export class HookRegistry {
  readonly #hooks: DatabaseHooks[] = [];
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  register(hooks: DatabaseHooks): void {
    this.#hooks.push(hooks);
  }

  for(db: string): DatabaseHooks[] {
    // A loop rather than filter(): every request that opens a database asks.
    const applying: DatabaseHooks[] = [];
    for (const hooks of this.#hooks) if (hooks.appliesTo(db)) applying.push(hooks);
    return applying;
  }

  /** Runs every `afterWrite` of `written.db`, one after the other, before the write is answered. */
  async afterWrite(written: Written): Promise<void> {
    for (const hooks of this.for(written.db)) {
      if (!hooks.afterWrite) continue;
      try {
        await hooks.afterWrite(written);
      } catch (error) {
        // The write is durable: a hook that fails must not turn it into an error.
        this.#log.warning(`${hooks.name}: after a write to ${JSON.stringify(written.db)}: ${(error as Error).message}`);
      }
    }
  }
}
