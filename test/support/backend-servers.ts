import { after, before, describe } from 'node:test';
import { BACKENDS, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from './backends.js';
import { startServer, type TestServer } from './server.js';

/**
 * Runs `body` once per storage backend of `STORAGE_BACKENDS` (as the contract suite does), each
 * time against a real Divan over loopback whose `[divan] storage` is that backend.
 */
export function describeOnEachBackend(title: string, body: (server: () => TestServer) => void, ini = ''): void {
  for (const backend of BACKENDS) {
    describe(`${title} (${backend.name})`, () => {
      let server: TestServer | undefined;
      const schema = uniqueSchema();
      before(async () => {
        const storage = backend.name === 'postgres' ? `[divan]\nstorage = postgres\npostgres_url = ${POSTGRES_TEST_URL}\npostgres_schema = ${schema}\n` : '';
        server = await startServer({ ini: `${storage}${ini}` });
      });
      after(async () => {
        await server?.close();
        if (backend.name === 'postgres' && POSTGRES_TEST_URL !== undefined) await dropSchema(POSTGRES_TEST_URL, schema);
      });
      body(() => {
        if (server === undefined) throw new Error('server used outside a test');
        return server;
      });
    });
  }
}
