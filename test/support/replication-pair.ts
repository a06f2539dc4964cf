import { createServer } from 'node:net';
import { request, type HttpResponse } from './http.js';
import { adminDataDir, startDivan, type RunningDivan } from './process.js';

/** A port free right now, so a server restarted on the same data keeps its URL (and replication ids). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One real Divan binary on a fixed port and its own data directory, restartable on both. */
export class Node {
  readonly auth: [string, string];
  readonly url: string;
  readonly #args: string[];
  readonly #remove: () => void;
  running: RunningDivan | undefined;
  #past = '';

  private constructor(args: string[], auth: [string, string], remove: () => void, port: number) {
    this.#args = args;
    this.auth = auth;
    this.#remove = remove;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(prefix: string): Promise<Node> {
    const { args, auth, remove } = adminDataDir(prefix);
    const port = await freePort();
    const node = new Node(args.map((arg, i) => (args[i - 1] === '--port' ? String(port) : arg)), auth, remove, port);
    await node.restart();
    return node;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.running = await startDivan(this.#args);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    await this.running.stop('SIGTERM');
    this.#past += this.running.stdout() + this.running.stderr();
    this.running = undefined;
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.#remove();
  }

  /** The database URL with the admin's credentials in it, as users write replication endpoints. */
  dbUrl(db: string, auth: [string, string] = this.auth): string {
    return `http://${encodeURIComponent(auth[0])}:${encodeURIComponent(auth[1])}@127.0.0.1:${new URL(this.url).port}/${db}`;
  }

  call(path: string, options: Parameters<typeof request>[2] = {}): Promise<HttpResponse> {
    return request(this.url, path, { auth: this.auth, ...options });
  }

  /** Logs of the running binary and every earlier run. */
  logs(): string {
    return `${this.#past}${this.running?.stdout() ?? ''}${this.running?.stderr() ?? ''}`;
  }
}

/** Polls `check` until it answers a value (not undefined), or fails after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 15000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
