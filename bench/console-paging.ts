/**
 * How fast the console's document list pages on a big database: a page by key (`startkey` +
 * `limit`, what `static/console/documents.js` asks for, with the backwards read for "Previous")
 * against a page by `skip` (what it asked for before), near the start and near the end of
 * CONSOLE_PAGING_DOCS documents (default 1,000,000). Prints a Markdown table.
 *
 * npm run build && node dist/bench/console-paging.js
 */
import { performance } from 'node:perf_hooks';
import { startServer } from '../test/support/server.js';

const DOCS = Number(process.env['CONSOLE_PAGING_DOCS'] ?? 1_000_000);
const BATCH = 5000;
const RUNS = 5;
const LIMIT = 20;

const id = (index: number): string => `doc-${String(index).padStart(8, '0')}`;

const server = await startServer();
try {
  await server.admin('/big', { method: 'PUT' });
  const loading = performance.now();
  for (let from = 0; from < DOCS; from += BATCH) {
    const docs = Array.from({ length: Math.min(BATCH, DOCS - from) }, (_, offset) => ({ _id: id(from + offset), n: from + offset }));
    const answer = await server.admin('/big/_bulk_docs', { method: 'POST', body: { docs } });
    if (answer.status !== 201) throw new Error(`bulk load failed: ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  console.log(`loaded ${DOCS} documents in ${((performance.now() - loading) / 1000).toFixed(1)} s\n`);
  const median = async (path: string): Promise<number> => {
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      const answer = await server.admin(path);
      if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
  };
  const near = [['start', LIMIT], ['end', DOCS - LIMIT]] as const;
  console.log('| page | by key (next) | by key (previous) | by skip |\n|---|---|---|---|');
  for (const [where, at] of near) {
    const key = encodeURIComponent(JSON.stringify(id(at)));
    const next = await median(`/big/_all_docs?limit=${LIMIT + 1}&startkey=${key}`);
    const previous = await median(`/big/_all_docs?limit=${LIMIT}&startkey=${key}&descending=true&skip=1`);
    const skip = await median(`/big/_all_docs?limit=${LIMIT}&skip=${at}`);
    console.log(`| near the ${where} (row ${at}) | ${next.toFixed(1)} ms | ${previous.toFixed(1)} ms | ${skip.toFixed(1)} ms |`);
  }
} finally {
  await server.close();
}
