import { randomBytes, randomInt } from 'node:crypto';

/** CouchDB 3.5's `[uuids] algorithm` values (couch_uuids.erl). */
const UUID_ALGORITHMS = ['random', 'sequential', 'utc_random', 'utc_id'] as const;
type UuidAlgorithm = (typeof UUID_ALGORITHMS)[number];

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** Microseconds since the epoch, as CouchDB's clock sequence counts them. */
function micros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * The ids `/_uuids` hands out and a document written without `_id` gets, by CouchDB's algorithms:
 * `random` (32 random hex digits), `sequential` (26 random hex digits, then 6 that grow by a random
 * step below 0xffe, a new prefix on overflow), `utc_random` (14 hex digits of microseconds, 18
 * random) and `utc_id` (the same time, then `[uuids] utc_id_suffix`). The time-based ones never go
 * back: when the clock lags, the last value plus one is used, as CouchDB's clock sequence.
 */
class UuidGenerator {
  #algorithm: UuidAlgorithm = 'sequential';
  #suffix = '';
  #prefix = hex(13);
  #sequence = UuidGenerator.#step();
  #clock = 0;

  static #step(): number {
    return randomInt(1, 0xffe);
  }

  /** An unknown algorithm falls back to `sequential` (CouchDB's default) and is reported as false. */
  configure(algorithm: string, utcIdSuffix: string): boolean {
    const known = (UUID_ALGORITHMS as readonly string[]).includes(algorithm);
    this.#algorithm = known ? (algorithm as UuidAlgorithm) : 'sequential';
    this.#suffix = utcIdSuffix;
    return known;
  }

  next(): string {
    switch (this.#algorithm) {
      case 'random':
        return hex(16);
      case 'utc_random':
        return this.#timePrefix() + hex(9);
      case 'utc_id':
        return this.#timePrefix() + this.#suffix;
      case 'sequential':
        return this.#nextSequential();
    }
  }

  #nextSequential(): string {
    const id = this.#prefix + this.#sequence.toString(16).padStart(6, '0');
    if (this.#sequence >= 0xfff000) {
      this.#prefix = hex(13);
      this.#sequence = UuidGenerator.#step();
    } else {
      this.#sequence += UuidGenerator.#step();
    }
    return id;
  }

  #timePrefix(): string {
    const now = micros();
    this.#clock = now > this.#clock ? now : this.#clock + 1;
    return this.#clock.toString(16).padStart(14, '0');
  }
}

/** The process's generator (CouchDB has one per node), configured from `[uuids]` at composition. */
export const uuids = new UuidGenerator();
