/**
 * A real server per selected storage backend (STORAGE_BACKENDS): SQLite in a temp dir, PostgreSQL
 * in a schema of its own, dropped afterwards.
 */
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
