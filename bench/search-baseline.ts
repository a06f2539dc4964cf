/**
 * The bare baseline of `bench/search.ts`: a node:http server answering full-text queries straight
 * from an SQLite FTS5 table (`node dist/bench/search-baseline.js FILE`): `GET /?q=MATCH` runs the
 * page (25 best by bm25) and the total, as a `_nouveau` query does, and answers them as JSON.
 */
import Database from 'better-sqlite3';
import { createServer } from 'node:http';

const db = new Database(process.argv[2]!, { readonly: true });
const page = db.prepare('SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 25');
const total = db.prepare('SELECT count(*) AS c FROM fts WHERE fts MATCH ?').pluck();

const server = createServer((req, res) => {
  const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
  const body = JSON.stringify({ total_hits: total.get(q), hits: page.all(q) });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object') process.stdout.write(`baseline listening on http://127.0.0.1:${address.port}/\n`);
});
