import { close, createWriteStream, fsync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/**
 * The ceiling for the attachment benchmark: a bare node:http server that answers a GET with `size`
 * bytes streamed in 256 KiB writes, honouring backpressure, and takes a PUT body: `PUT /drop`
 * drops it; any other PUT streams it into a file and fsyncs it before answering (a durable write,
 * as Divan's is).
 */
const dir = mkdtempSync(join(tmpdir(), 'divan-att-baseline-'));
let files = 0;
const size = Number(process.argv[2] ?? 64 * 1024 * 1024);
const block = Buffer.alloc(256 * 1024, 0x5a);
const server = createServer((req, res) => {
  if (req.method === 'PUT') {
    const done = (): void => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}\n');
    };
    if (req.url === '/drop') {
      req.resume();
      req.on('end', done);
      return;
    }
    const file = createWriteStream(join(dir, String(files++)), { autoClose: false });
    const fd = (): number => (file as unknown as { fd: number }).fd;
    file.on('finish', () => fsync(fd(), () => close(fd(), done)));
    void pipeline(req, file, { end: false }).then(() => file.end(), () => res.destroy());
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size });
  let sent = 0;
  const more = (): void => {
    while (sent < size) {
      const piece = block.subarray(0, Math.min(block.length, size - sent));
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`baseline listening on http://127.0.0.1:${address.port}/\n`);
});
process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true });
  server.close(() => process.exit(0));
});
