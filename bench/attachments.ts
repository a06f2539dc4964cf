/**
 * Attachment throughput and memory: a 64 MiB attachment PUT to Divan (standalone attachment
 * upload) and GET back, timed against a bare node:http server (attachment-baseline.ts) taking and
 * streaming the same bytes in the same run, alternating baseline and Divan. Reports throughput as a
 * ratio to the baseline (goal ≥ 0.5) and the Divan process's peak RSS growth over its RSS before
 * the transfers (goal < 32 MiB), sampled from /proc every 10 ms.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SIZE = 64 * 1024 * 1024;
const ROUNDS = Number(process.env['ATTACHMENT_BENCH_ROUNDS'] ?? 3);
const AUTH = `Basic ${Buffer.from('admin:bench-pass').toString('base64')}`;

function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ url: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) resolve({ url: match[1]!.replace(/\/$/, ''), pid: child.pid!, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/** One transfer; answers its seconds. PUT streams `block` repeatedly; GET drains the answer. */
function transfer(url: string, method: 'PUT' | 'GET', block: Buffer): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: AUTH };
    if (method === 'PUT') Object.assign(headers, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(SIZE) });
    const req = request(url, { method, headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 300 || (method === 'GET' && bytes !== SIZE)) reject(new Error(`${method} ${url}: ${res.statusCode}, ${bytes} bytes`));
        else resolve(Number(process.hrtime.bigint() - started) / 1e9);
      });
    });
    req.on('error', reject);
    if (method === 'GET') return void req.end();
    let sent = 0;
    const more = (): void => {
      while (sent < SIZE) {
        sent += block.length;
        if (!req.write(block)) return void req.once('drain', more);
      }
      req.end();
    };
    more();
  });
}

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'divan-att-bench-'));
  const ini = join(data, 'bench.ini');
  writeFileSync(ini, '[admins]\nadmin = bench-pass\n[log]\nlevel = warning\n');
  const divan = await start([join(ROOT, 'dist', 'src', 'main.js'), '--port', '0', '--data', data, '--config', ini], {}, /Divan listening on (http:\/\/\S+)\n/);
  const baseline = await start([join(ROOT, 'dist', 'bench', 'attachment-baseline.js'), String(SIZE)], {}, /baseline listening on (http:\/\/\S+)\n/);
  const block = randomBytes(1024 * 1024);
  try {
    await fetch(`${divan.url}/bench`, { method: 'PUT', headers: { Authorization: AUTH } });
    const cold = rssMiB(divan.pid);
    // One untimed round first: V8 collects Buffers only once some 64 MB of them are garbage, and
    // the allocator keeps freed pages, so the first transfers raise the RSS of any node:http server.
    let coldPeak = cold;
    const coldSampler = setInterval(() => (coldPeak = Math.max(coldPeak, rssMiB(divan.pid))), 10);
    await transfer(`${divan.url}/bench/warm/big.bin`, 'PUT', block);
    await transfer(`${divan.url}/bench/warm/big.bin`, 'GET', block);
    clearInterval(coldSampler);
    const before = rssMiB(divan.pid);
    const peaks = { upload: before, download: before };
    let phase: keyof typeof peaks = 'upload';
    const sampler = setInterval(() => (peaks[phase] = Math.max(peaks[phase], rssMiB(divan.pid))), 10);
    const times = { drop: [] as number[], basePut: [] as number[], divanPut: [] as number[], baseGet: [] as number[], divanGet: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      times.drop.push(await transfer(`${baseline.url}/drop`, 'PUT', block));
      times.basePut.push(await transfer(`${baseline.url}/file`, 'PUT', block));
      times.divanPut.push(await transfer(`${divan.url}/bench/doc${round}/big.bin`, 'PUT', block));
    }
    phase = 'download';
    for (let round = 0; round < ROUNDS; round++) {
      times.baseGet.push(await transfer(`${baseline.url}/`, 'GET', block));
      times.divanGet.push(await transfer(`${divan.url}/bench/doc${round}/big.bin`, 'GET', block));
    }
    clearInterval(sampler);
    const best = (values: number[]): number => Math.min(...values);
    const mibps = (seconds: number): number => SIZE / 1024 / 1024 / seconds;
    const rows = [
      ['upload (PUT /db/doc/att) vs a node:http PUT written to a file and fsynced', mibps(best(times.divanPut)), mibps(best(times.basePut))],
      ['upload (PUT /db/doc/att) vs a node:http PUT that drops the bytes', mibps(best(times.divanPut)), mibps(best(times.drop))],
      ['download (GET /db/doc/att) vs a node:http GET streaming from memory', mibps(best(times.divanGet)), mibps(best(times.baseGet))],
    ] as const;
    const growth = Math.max(peaks.upload, peaks.download) - before;
    const lines = [
      '| scenario | Divan MiB/s | baseline MiB/s | ratio | goal | met |',
      '|---|---|---|---|---|---|',
      ...rows.map(([name, divanRate, baseRate], i) => `| 64 MiB ${name} | ${divanRate.toFixed(0)} | ${baseRate.toFixed(0)} | ${(divanRate / baseRate).toFixed(2)} | ${i === 1 ? '' : '≥ 0.5'} | ${i === 1 ? '' : divanRate / baseRate >= 0.5 ? 'yes' : '**no**'} |`),
      '',
      `Peak RSS growth of the Divan process over ${ROUNDS} uploads and ${ROUNDS} downloads of 64 MiB: ${growth.toFixed(1)} MiB (from ${before.toFixed(1)} MiB after one untimed round; peak while uploading ${peaks.upload.toFixed(1)}, while downloading ${peaks.download.toFixed(1)}; goal < 32 MiB: ${growth < 32 ? 'met' : '**not met**'}). The untimed first round, from a cold server at ${cold.toFixed(1)} MiB, peaked at ${coldPeak.toFixed(1)} MiB (growth ${(coldPeak - cold).toFixed(1)} MiB). Best of ${ROUNDS} rounds, baseline and Divan alternating, Node ${process.version}, SQLite backend.`,
    ];
    const text = `# Attachment benchmark\n\n${new Date().toISOString()}\n\n${lines.join('\n')}\n`;
    process.stdout.write(text);
    writeFileSync(join(ROOT, 'bench', 'attachments-results.md'), text);
  } finally {
    divan.stop();
    baseline.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`attachment bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
