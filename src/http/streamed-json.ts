/**
 * Long JSON answers made of rows (`_all_docs` with `keys`, `_bulk_get`) sent as they are made: the
 * rows come in batches, each batch is serialised and written (waiting while the socket is full),
 * and the event loop gets a turn between rows, so an answer of 200 000 rows neither holds the
 * process nor sits whole in memory. When the client goes away the batches stop.
 *
 * @example
 * return streamedRows(200, '{"total_rows":3,"offset":null,"rows":[', ']}', batchesOfRows())
 */
import type { Json } from '../json/json.js';
import { LoopTurns } from '../turns/loop-turns.js';
import type { Reply } from './reply.js';

/** Bytes gathered before one write: few syscalls, bounded memory. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A reply whose body is `opening`, the rows of `batches` separated by commas, then `closing` and a
 * newline. An error before the first batch is answered as an ordinary error reply.
 */
export function streamedRows(status: number, opening: string, closing: string, batches: (signal: AbortSignal) => AsyncIterable<readonly Json[]>): Reply {
  return {
    status,
    stream: async (out) => {
      const turns = LoopTurns.until(out.signal);
      let pending = '';
      let first = true;
      for await (const rows of batches(out.signal)) {
        if (first) pending = opening;
        for (const row of rows) {
          await turns.maybeYield();
          pending += first ? JSON.stringify(row) : `,${JSON.stringify(row)}`;
          first = false;
          if (pending.length >= CHUNK_BYTES) {
            await out.write(pending);
            pending = '';
          }
        }
      }
      await out.write(`${first ? opening : pending}${closing}\n`);
    },
  };
}
