#!/usr/bin/env node
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { createServer, isIP, type AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { configuredWorkers, createApp, prepareWorkers, StartupError, VERSION, type App, type AppOptions, type WorkerLane } from './app.js';
import { Supervisor, type Listening } from './cluster/supervisor.js';
import type { ToPrimary, WorkerChannel } from './cluster/worker-protocol.js';
import { ConfigLoadError } from './config/config-file.js';
import { AuthenticationConfigError } from './auth/build-chain.js';

const USAGE = 'usage: divan [--port N] [--bind ADDR] [--data DIR] [--workers N] [--config FILE]...';

interface Flags {
  port?: number;
  workers?: number;
  bind?: string;
  data: string;
  config: string[];
}

function fail(message: string, code = 1): never {
  process.stderr.write(`Divan: ${message}\n`);
  process.exit(code);
}

function readFlags(argv: string[]): Flags {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        bind: { type: 'string' },
        data: { type: 'string' },
        workers: { type: 'string' },
        config: { type: 'string', multiple: true },
        help: { type: 'boolean' },
        version: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${(error as Error).message.split('\n')[0]} (${USAGE})`, 2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    process.exit(0);
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) fail(`--port must be a number from 0 to 65535, not ${JSON.stringify(values.port)}`, 2);
    port = Number(values.port);
  }
  if (values.bind !== undefined && isIP(values.bind) === 0 && values.bind !== 'localhost') {
    fail(`--bind must be an IP address, not ${JSON.stringify(values.bind)}`, 2);
  }
  if (values.data === '') fail('--data needs a directory', 2);
  if (values.workers !== undefined && !/^\d{1,4}$/.test(values.workers)) fail(`--workers must be a number (0: one per core), not ${JSON.stringify(values.workers)}`, 2);
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  return { port, workers, bind: values.bind, data: values.data ?? 'data', config: values.config ?? [] };
}

function urlHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

function appOptions(flags: Flags): AppOptions {
  return { dataDir: flags.data, configFiles: flags.config, env: process.env };
}

function failStartup(error: unknown): never {
  if (error instanceof StartupError || error instanceof ConfigLoadError || error instanceof AuthenticationConfigError) fail(error.message);
  throw error;
}

/** Runs one server process: the whole server (`workers = 1`), or one worker of the primary. */
async function serve(flags: Flags, worker?: { channel: WorkerChannel; nodeId: string; workers: number; port: number; tlsPort?: number; lane?: WorkerLane }): Promise<void> {
  if (worker?.lane?.heavy) lowerPriority();
  let app: App;
  try {
    app = await createApp({ ...appOptions(flags), worker });
  } catch (error) {
    failStartup(error);
  }
  const port = worker?.port ?? flags.port ?? app.config.getInteger('chttpd', 'port');
  const bind = flags.bind ?? app.config.getString('chttpd', 'bind_address');
  let bound: { address: string; port: number };
  let tlsBound: { address: string; port: number } | undefined;
  try {
    if (worker?.lane?.heavy) {
      await app.listenLane(worker.lane.address.socketPath);
      return stopOnSignals(app, true);
    }
    bound = await app.listen(port, bind);
    if (app.config.getBoolean('ssl', 'enable')) {
      tlsBound = await app.listenTls(worker?.tlsPort ?? app.config.getInteger('ssl', 'port'), bind);
    }
  } catch (error) {
    await app.close();
    if (error instanceof StartupError) fail(error.message);
    throw error;
  }
  // Installed before the ready line: a supervisor may signal as soon as it reads it.
  stopOnSignals(app, worker !== undefined);
  if (worker) {
    if (tlsBound) worker.channel.send({ divan: 'listening', ...tlsBound, tls: true });
    worker.channel.send({ divan: 'listening', ...bound, tls: false });
    return;
  }
  printReady(app.generatedAdminPassword, [...(tlsBound ? [{ ...tlsBound, tls: true }] : []), { ...bound, tls: false }]);
}

/** SIGTERM drains and stops; a worker also stops when its primary is gone, and leaves Ctrl-C (which reaches the whole process group) to the primary. */
function stopOnSignals(app: App, isWorker: boolean): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => process.exit(0),
      (error: unknown) => fail(`error while stopping: ${(error as Error).message}`),
    );
  };
  process.on('SIGTERM', stop);
  if (!isWorker) return void process.on('SIGINT', stop);
  process.on('SIGINT', () => undefined);
  process.on('disconnect', stop);
}

/**
 * A heavy-lane process runs at a lower CPU priority (nice 10), every thread of it: the kernel then
 * gives a core to the serving workers first. Threads started later (the JavaScript sandbox's)
 * inherit it.
 */
function lowerPriority(): void {
  for (const task of readdirSync('/proc/self/task', { withFileTypes: false }).map(Number)) {
    try {
      setPriority(task, 10);
    } catch {
      // Not Linux, or a thread that ended meanwhile: the process's own priority is the one that matters most.
    }
  }
  try {
    setPriority(10);
  } catch {
    // The lane then runs at the serving workers' priority: slower light requests under load, nothing worse.
  }
}

function printReady(generatedAdminPassword: string | undefined, listening: readonly Listening[]): void {
  if (generatedAdminPassword) {
    process.stdout.write(
      `No server admin was configured: created "admin" with password ${generatedAdminPassword}\n` +
        '(only its hash is stored; this is the only time it is shown)\n',
    );
  }
  for (const each of [...listening].sort((a, b) => Number(b.tls) - Number(a.tls))) {
    process.stdout.write(`Divan listening on ${each.tls ? 'https' : 'http'}://${urlHost(each.address)}:${each.port}/\n`);
  }
}

/** A free port on `bind`, so that every worker (and every replacement) listens on the same one. */
function freePort(bind: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, bind, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

/** The primary of `[divan] workers`: once-only start-up work, then the workers, then the ready line. */
async function supervise(flags: Flags, workers: number): Promise<void> {
  let prepared: Awaited<ReturnType<typeof prepareWorkers>>;
  try {
    prepared = await prepareWorkers(appOptions(flags));
  } catch (error) {
    failStartup(error);
  }
  const { config } = prepared;
  const bind = flags.bind ?? config.getString('chttpd', 'bind_address');
  const tls = config.getBoolean('ssl', 'enable');
  let port = flags.port ?? config.getInteger('chttpd', 'port');
  let tlsPort = config.getInteger('ssl', 'port');
  try {
    if (port === 0) port = await freePort(bind);
    if (tls && tlsPort === 0) tlsPort = await freePort(bind);
  } catch (error) {
    fail(`cannot listen on ${bind}: ${(error as Error).message}`);
  }
  const lanes = config.getBoolean('divan', 'heavy_lane') ? heavyLane(workers) : undefined;
  const supervisor = new Supervisor({
    workers,
    ...(lanes === undefined ? {} : { lanes }),
    tls,
    env: { DIVAN_WORKER_PORT: String(port), DIVAN_WORKER_TLS_PORT: String(tlsPort), DIVAN_NODE_ID: randomBytes(8).toString('hex'), DIVAN_WORKER_COUNT: String(workers), ...lanes?.serving },
    onReady: (listening) => printReady(prepared.generatedAdminPassword, listening),
    onStartFailed: (reason) => void supervisor.stop().then(() => fail(reason)),
    warn: (line) => process.stderr.write(`Divan: ${line}\n`),
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void supervisor.stop().then(() => {
      if (lanes !== undefined) rmSync(lanes.directory, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  supervisor.start();
}

/**
 * The heavy lane of a start (docs/workers.md): as many lane processes as workers, listening on a
 * Unix socket in a fresh directory only this user can enter, with a random token.
 */
function heavyLane(workers: number): { count: number; env: Record<string, string>; serving: Record<string, string>; directory: string } {
  const directory = mkdtempSync(join(tmpdir(), 'divan-lane-'));
  const serving = { DIVAN_LANE_SOCKET: join(directory, 'heavy.sock'), DIVAN_LANE_TOKEN: randomBytes(16).toString('hex') };
  return { count: workers, env: { DIVAN_LANE_ROLE: 'heavy' }, serving, directory };
}

/** A worker's part in the heavy lane, from the environment the primary gave it. */
function laneOf(env: NodeJS.ProcessEnv): WorkerLane | undefined {
  const socketPath = env['DIVAN_LANE_SOCKET'];
  const token = env['DIVAN_LANE_TOKEN'];
  if (socketPath === undefined || token === undefined) return undefined;
  return { address: { socketPath, token }, heavy: env['DIVAN_LANE_ROLE'] === 'heavy' };
}

function workerChannel(): WorkerChannel {
  return {
    id: `w${cluster.worker!.id}`,
    send: (message: ToPrimary) => {
      if (!process.connected) throw new Error('the channel to the primary is closed');
      process.send!(message);
    },
    onMessage: (listener) => process.on('message', listener),
    onClose: (listener) => process.once('disconnect', listener),
  };
}

/**
 * By default a promise rejected with nobody awaiting it ends the process, and with it every request
 * it serves (a worker's, or the whole server's): such a rejection is a bug to log, not a reason to
 * drop the other clients' requests. Thrown exceptions still end the process (state may be broken).
 */
function keepServingOnUnhandledRejection(): void {
  process.on('unhandledRejection', (reason: unknown) => {
    const text = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    process.stderr.write(`Divan: [error] unhandled promise rejection, kept serving: ${text}\n`);
  });
}

async function main(): Promise<void> {
  keepServingOnUnhandledRejection();
  const flags = readFlags(process.argv.slice(2));
  if (cluster.isWorker) {
    const env = process.env;
    const tlsPort = env['DIVAN_WORKER_TLS_PORT'] === undefined ? undefined : Number(env['DIVAN_WORKER_TLS_PORT']);
    const lane = laneOf(env);
    return serve(flags, { channel: workerChannel(), nodeId: env['DIVAN_NODE_ID'] ?? '', workers: Number(env['DIVAN_WORKER_COUNT'] ?? 1) || 1, port: Number(env['DIVAN_WORKER_PORT']), tlsPort, ...(lane === undefined ? {} : { lane }) });
  }
  let workers: number;
  try {
    workers = flags.workers ?? (await configuredWorkers(appOptions(flags)));
  } catch (error) {
    failStartup(error);
  }
  if (workers === 0) workers = availableParallelism();
  return workers === 1 ? serve(flags) : supervise(flags, workers);
}

main().catch((error: unknown) => fail(`unexpected start-up failure: ${(error as Error).message}`));
