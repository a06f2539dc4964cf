/**
 * A tiny hostile "CouchDB" on loopback for replicator tests: it answers the database info and
 * missing checkpoints, and `_changes` as the test says (huge, endless, empty at once...). It counts
 * the requests it gets per path.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface StubCouch {
  url: string;
  /** Requests seen, by path without the query (`/db/_changes`). */
  counts: Map<string, number>;
  close(): Promise<void>;
}

export type ChangesHandler = (request: IncomingMessage, response: ServerResponse) => void;

export async function startStubCouch(changes: ChangesHandler): Promise<StubCouch> {
  const counts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://stub').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    request.resume();
    const json = (status: number, body: unknown): void => void response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/db' || path === '/db/') return json(200, { db_name: 'db', update_seq: '1-x', instance_start_time: '0' });
    if (path.startsWith('/db/_local/')) return json(404, { error: 'not_found', reason: 'missing' });
    if (path === '/db/_changes') return changes(request, response);
    json(404, { error: 'not_found', reason: 'missing' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
