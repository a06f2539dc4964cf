/**
 * A loopback identity provider for JWKS tests: serves `{"keys": […]}` on any path, with keys that
 * can be swapped, a mode switch and a request counter.
 *
 * @module
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * - `up`: 200 with the current key set;
 * - `down`: the connection is reset without an answer (provider unreachable);
 * - `error`: 503;
 * - `garbage`: 200 with a body that is not a key set;
 * - `hang`: never answers (until the server closes).
 */
export type JwksServerMode = 'up' | 'down' | 'error' | 'garbage' | 'hang';

export interface JwksServer {
  /** `http://127.0.0.1:<port>/jwks.json` */
  readonly url: string;
  /** Requests received so far, answered or not. */
  readonly requests: number;
  setKeys(keys: readonly object[]): void;
  setMode(mode: JwksServerMode): void;
  close(): Promise<void>;
}

export async function startJwksServer(keys: readonly object[] = []): Promise<JwksServer> {
  let current: readonly object[] = keys;
  let mode: JwksServerMode = 'up';
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    request.resume();
    switch (mode) {
      case 'up':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ keys: current }));
        return;
      case 'down':
        request.socket.destroy();
        return;
      case 'error':
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end('{"error":"unavailable"}');
        return;
      case 'garbage':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"not":"a key set"}');
        return;
      case 'hang':
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    get requests() {
      return requests;
    },
    setKeys(next) {
      current = next;
    },
    setMode(next) {
      mode = next;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
