/**
 * A real server per selected storage backend (STORAGE_BACKENDS): SQLite in a temp dir, PostgreSQL
 * in a schema of its own, dropped afterwards.
 */
import { after, before, describe } from 'node:test';
import { BACKENDS, dropSchema, POSTGRES_TEST_URL, uniqueSchema } from './backends.js';
import { startServer, type TestServer, type TestServerOptions } from './server.js';

export interface BackendServer {
  name: string;
  start(options?: TestServerOptions): Promise<TestServer>;
}

export const BACKEND_SERVERS: BackendServer[] = BACKENDS.map((backend) => ({
  name: backend.name,
  async start(options: TestServerOptions = {}): Promise<TestServer> {
    if (backend.name !== 'postgres') return startServer(options);
    const schema = uniqueSchema();
    const ini = ['[divan]', 'storage = postgres', `postgres_url = ${POSTGRES_TEST_URL}`, `postgres_schema = ${schema}`, options.ini ?? ''].join('\n');
    const server = await startServer({ ...options, ini });
    const close = server.close.bind(server);
    return { ...server, close: async () => { await close(); await dropSchema(POSTGRES_TEST_URL!, schema); } };
  },
}));

/**
 * Runs `body` once per storage backend of `STORAGE_BACKENDS` (as the contract suite does), each
 * time against a real Divan over loopback whose `[divan] storage` is that backend.
 */
export function describeOnEachBackend(title: string, body: (server: () => TestServer) => void, ini = ''): void {
  for (const backend of BACKEND_SERVERS) {
    describe(`${title} (${backend.name})`, () => {
      let server: TestServer | undefined;
      before(async () => {
        server = await backend.start({ ini });
      });
      after(async () => server?.close());
      body(() => {
        if (server === undefined) throw new Error('server used outside a test');
        return server;
      });
    });
  }
}
