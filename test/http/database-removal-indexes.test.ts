import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { BACKENDS, dropSchema, POSTGRES_TEST_URL, uniqueSchema } from '../support/backends.js';
import { startServer, type TestServer } from '../support/server.js';

const DDOC = {
  views: { by_n: { map: 'function (doc) { emit(doc.n, 1); }', reduce: '_count' } },
  nouveau: { text: { index: "function (doc) { index('text', 'title', doc.title); }" } },
};

/** The names of the tables that hold view and search index rows. */
async function indexTables(backend: string, server: TestServer, schema: string | undefined): Promise<string[]> {
  const pattern = /^(view_|search_)/;
  if (backend !== 'postgres') {
    const file = new Database(join(server.dataDir, 'divan.sqlite'), { readonly: true });
    try {
      const names = file.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
      return names.filter((name) => pattern.test(name) && /_\d+$/.test(name));
    } finally {
      file.close();
    }
  }
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema]);
    return rows.map((row) => row.tablename).filter((name) => pattern.test(name) && /_\d+$/.test(name));
  } finally {
    await client.end();
  }
}

for (const backend of BACKENDS) {
  describe(`deleting a database (${backend.name})`, () => {
    it('drops the tables of its view and search indexes, and a database of the same name starts with none', async () => {
      const schema = backend.name === 'postgres' ? uniqueSchema() : undefined;
      const ini = schema === undefined ? '' : ['[divan]', 'storage = postgres', `postgres_url = ${POSTGRES_TEST_URL}`, `postgres_schema = ${schema}`].join('\n');
      const server = await startServer({ ini });
      try {
        const before = await indexTables(backend.name, server, schema);
        assert.equal((await server.admin('/books', { method: 'PUT' })).status, 201);
        await server.admin('/books/_bulk_docs', { method: 'POST', body: { docs: [{ n: 1, title: 'moby dick' }, { n: 2, title: 'dracula' }] } });
        await server.admin('/books/_design/d', { method: 'PUT', body: DDOC });
        assert.deepEqual((await server.admin('/books/_design/d/_view/by_n')).body, { rows: [{ key: null, value: 2 }] });
        assert.equal((await server.admin('/books/_design/d/_nouveau/text?q=title:dracula')).body.total_hits, 1);
        assert.ok((await indexTables(backend.name, server, schema)).length > before.length, 'the indexes have tables');

        assert.equal((await server.admin('/books', { method: 'DELETE' })).status, 200);
        assert.deepEqual(await indexTables(backend.name, server, schema), before);

        await server.admin('/books', { method: 'PUT' });
        await server.admin('/books/_design/d', { method: 'PUT', body: DDOC });
        await server.admin('/books', { method: 'POST', body: { n: 3, title: 'dracula returns' } });
        assert.deepEqual((await server.admin('/books/_design/d/_view/by_n')).body, { rows: [{ key: null, value: 1 }] });
        assert.equal((await server.admin('/books/_design/d/_nouveau/text?q=title:dracula')).body.total_hits, 1);
      } finally {
        await server.close();
        if (schema !== undefined) await dropSchema(POSTGRES_TEST_URL!, schema);
      }
    });
  });
}
