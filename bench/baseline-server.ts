import { createServer } from 'node:http';

/**
 * The ceiling: a bare node:http server answering a constant JSON body of a given size, with the
 * same headers Divan sends. Started as its own process so it never shares an event loop with the
 * load generator.
 */
const size = Number(process.argv[2] ?? 150);
const body = Buffer.from(`${JSON.stringify({ ok: true, pad: 'x'.repeat(Math.max(0, size - 22)) })}\n`);
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate', 'Content-Length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`baseline listening on http://127.0.0.1:${address.port}/\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
