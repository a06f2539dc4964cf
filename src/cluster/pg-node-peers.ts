/**
 * The nodes of a PostgreSQL cluster, and questions one node asks another (`/_node/{name}/_stats`…,
 * as CouchDB's `chttpd_node` calls a remote node). Each node says it is alive every few seconds in
 * `divan_nodes`; a question travels over the cluster bus (NOTIFY payloads are small), its answer,
 * which may be large (a Prometheus scrape), is left in `divan_node_answers` and announced on the bus.
 * Every worker process of the asked node hears the question; the first to store its answer is the
 * one announced. Both tables are unlogged: nothing in them outlives a restart's use.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BusMessage, ClusterBus } from './cluster-bus.js';
import type { NodeAnswer, NodePeers, NodeQuestion } from './node-peers.js';

const ASK = 'node-ask';
const ANSWERED = 'node-answer';
/** How often a node says it is alive, and how long after its last word it counts as gone. */
const HEARTBEAT_MS = 3000;
const ALIVE_MS = 15000;
const ANSWER_TIMEOUT_MS = 5000;

interface PeersOptions {
  url: string;
  schema: string;
  name: string;
  bus: ClusterBus;
  answer(question: NodeQuestion): Promise<NodeAnswer>;
  warn(line: string): void;
}

export class PostgresNodePeers implements NodePeers {
  readonly #options: PeersOptions;
  readonly #pool: pg.Pool;
  readonly #nodes: string;
  readonly #answers: string;
  readonly #waiting = new Map<string, (found: boolean) => void>();
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(options: PeersOptions) {
    this.#options = options;
    this.#pool = new pg.Pool({ connectionString: options.url, max: 2, application_name: 'divan-peers' });
    this.#pool.on('error', () => undefined);
    const schema = pg.escapeIdentifier(options.schema);
    this.#nodes = `${schema}.divan_nodes`;
    this.#answers = `${schema}.divan_node_answers`;
  }

  async start(): Promise<void> {
    // Nodes starting together would race on CREATE TABLE IF NOT EXISTS (a duplicate pg_type row): one at a time.
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.#nodes]);
      await client.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${this.#nodes} (name text PRIMARY KEY, seen_at timestamptz NOT NULL)`);
      await client.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${this.#answers} (id text PRIMARY KEY, answer text NOT NULL, stored_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    await this.#heartbeat();
    this.#timer = setInterval(() => void this.#heartbeat().catch((error: unknown) => this.#options.warn(`cannot say this node is alive: ${(error as Error).message}`)), HEARTBEAT_MS);
    this.#timer.unref();
    this.#unsubscribe = this.#options.bus.subscribe((message) => void this.#heard(message));
  }

  async names(): Promise<string[]> {
    const { rows } = await this.#pool.query<{ name: string }>(
      `SELECT name FROM ${this.#nodes} WHERE seen_at > clock_timestamp() - $1::int * interval '1 millisecond' ORDER BY name`,
      [ALIVE_MS],
    );
    return rows.map((row) => row.name);
  }

  async ask(node: string, question: NodeQuestion): Promise<NodeAnswer | undefined> {
    const id = randomBytes(12).toString('hex');
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => (this.#waiting.delete(id), resolve(false)), ANSWER_TIMEOUT_MS);
      this.#waiting.set(id, (found) => (clearTimeout(timer), this.#waiting.delete(id), resolve(found)));
    });
    await this.#options.bus.publish(ASK, JSON.stringify({ id, to: node, question }));
    if (!(await arrived)) return undefined;
    const { rows } = await this.#pool.query<{ answer: string }>(`DELETE FROM ${this.#answers} WHERE id = $1 RETURNING answer`, [id]);
    return rows[0] === undefined ? undefined : (JSON.parse(rows[0].answer) as NodeAnswer);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
    await this.#pool.end().catch(() => undefined);
  }

  async #heartbeat(): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#nodes} (name, seen_at) VALUES ($1, clock_timestamp()) ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at`,
      [this.#options.name],
    );
    // Answers nobody collected (the asker timed out or died) are dropped here rather than kept.
    await this.#pool.query(`DELETE FROM ${this.#answers} WHERE stored_at < clock_timestamp() - interval '1 minute'`);
  }

  async #heard(message: BusMessage): Promise<void> {
    const wire = parsed(message.payload);
    if (message.topic === ANSWERED && typeof wire?.['id'] === 'string') this.#waiting.get(wire['id'])?.(true);
    if (message.topic !== ASK || wire?.['to'] !== this.#options.name || typeof wire['id'] !== 'string') return;
    const question = wire['question'] as NodeQuestion | undefined;
    if (!Array.isArray(question?.path) || !question.path.every((part) => typeof part === 'string')) return;
    try {
      const answer = await this.#options.answer(question);
      const stored = await this.#pool.query(`INSERT INTO ${this.#answers} (id, answer) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [wire['id'], JSON.stringify(answer)]);
      if (stored.rowCount === 1) await this.#options.bus.publish(ANSWERED, JSON.stringify({ id: wire['id'] }));
    } catch (error) {
      this.#options.warn(`cannot answer node question ${question.path.join('/')}: ${(error as Error).message}`);
    }
  }
}

function parsed(payload: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(payload) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
