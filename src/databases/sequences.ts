import { badRequest } from '../errors/catalog.js';

/**
 * Update sequences as clients see them: CouchDB 3's shape `N-<opaque>`, where N is the number of
 * updates (PouchDB reads it to order and compare sequences) and the opaque part is base64url text.
 * Inside, Divan's opaque part names the database instance (`instance_start_time`, kept in storage)
 * and the integer sequence, so a sequence is stable across restarts and nodes, and one given out
 * by an earlier database of the same name is recognised and rewinds to 0 instead of skipping the
 * new database's changes.
 */

/** Marks Divan's opaque part (and its layout version) inside the base64url text. */
const MARKER = 'd1';
/** The first byte of Erlang's external term format: the opaque part of CouchDB's own sequences. */
const ERLANG_TERM = 131;
const LAYOUT = new RegExp(`^${MARKER},(\\d+),(\\d+)$`);

const MALFORMED = `Malformed sequence supplied in 'since' parameter.`;

export class Sequences {
  readonly #instance: string;

  /** @param instance the database's `instance_start_time` */
  constructor(instance: string) {
    this.#instance = instance;
  }

  format(seq: number): string {
    return `${seq}-${Buffer.from(`${MARKER},${this.#instance},${seq}`).toString('base64url')}`;
  }

  /**
   * Reads a `since` value: `0`, `now` (the database's `now`), a bare integer (clients and
   * checkpoints from Divan before sequences were opaque), or `N-<opaque>`. An opaque part Divan
   * wrote for another instance of the database, or one a CouchDB wrote (its shard map means nothing
   * here), starts from 0 as CouchDB does for shards it cannot find; any other text is a 400.
   */
  parse(value: string | null, now: number): number {
    if (value === null || value === '' || value === '0') return 0;
    if (value === 'now') return now;
    const match = /^(\d+)(?:-(.+))?$/.exec(value.replace(/^"|"$/g, ''));
    if (!match) throw badRequest(MALFORMED);
    const opaque = match[2];
    const seq = opaque === undefined ? Number(match[1]) : this.#unpack(opaque);
    // A sequence past 2^53 is past every real one; an inexact float would reach SQL as a REAL.
    return Math.min(seq, Number.MAX_SAFE_INTEGER);
  }

  #unpack(opaque: string): number {
    if (!/^[A-Za-z0-9_-]+$/.test(opaque)) throw badRequest(MALFORMED);
    const bytes = Buffer.from(opaque, 'base64url');
    if (bytes[0] === ERLANG_TERM) return 0;
    const fields = LAYOUT.exec(bytes.toString('latin1'));
    if (!fields || bytes.toString('base64url') !== opaque) throw badRequest(MALFORMED);
    return fields[1] === this.#instance ? Number(fields[2]) : 0;
  }
}

/** The sequences of a database, from its info (absent: a database about to be reported missing). */
export function sequencesOf(info: { instanceStartTime: string } | null | undefined): Sequences {
  return new Sequences(info?.instanceStartTime ?? '0');
}
