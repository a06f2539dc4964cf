import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { keepTickEntryShape } from '../src/http/tick-shape.js';

/**
 * The ceiling: a bare node:http server answering a constant JSON body of a given size, with the
 * same headers Divan sends. Started as its own process so it never shares an event loop with the
 * load generator. `baseline-server.js SIZE [PROCESSES]`: with more than one process it runs
 * node:cluster workers on one port, as Divan does with `[divan] workers`.
 */
const size = Number(process.argv[2] ?? 150);
const processes = Number(process.argv[3] ?? 1);
const body = Buffer.from(`${JSON.stringify({ ok: true, pad: 'x'.repeat(Math.max(0, size - 22)) })}\n`);

function serve(port: number, ready: (port: number) => void): void {
  // Divan's servers keep a nextTick entry alive (src/http/tick-shape.ts); the ceiling does the same,
  // so an idle spell between scenarios cannot slow one and not the other.
  keepTickEntryShape();
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate', 'Content-Length': body.length });
    res.end(body);
  });
  server.listen(port, '127.0.0.1', () => ready((server.address() as { port: number }).port));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

const announce = (port: number): void => void process.stdout.write(`baseline listening on http://127.0.0.1:${port}/\n`);

if (processes <= 1) {
  serve(0, announce);
} else if (cluster.isPrimary) {
  // Every worker listens on port 0: node:cluster hands them all the same port.
  let listening = 0;
  for (let i = 0; i < processes; i++) {
    cluster.fork().on('listening', (address) => {
      if (++listening === processes) announce(address.port);
    });
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  });
} else {
  serve(0, () => undefined);
}
