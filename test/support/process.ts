import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How long a start may take before the test gives up on it. */
const READY_LIMIT_MS = 120_000;

/** The compiled entry point, as `npm start` runs it. */
export const MAIN = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'main.js');

export interface RunningDivan {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * One server process unless a test asks for workers: a machine's core count must not change what
 * (or how much) a test runs.
 */
function withWorkers(args: string[]): string[] {
  return args.includes('--workers') ? args : ['--workers', '1', ...args];
}

/**
 * Starts the real binary and resolves once it prints its ready line. `defaultWorkers` leaves the
 * worker count to the server's own default (for the test of that default).
 */
export function startDivan(args: string[], env: Record<string, string> = {}, { defaultWorkers = false } = {}): Promise<RunningDivan> {
  const child = spawn(process.execPath, [MAIN, ...(defaultWorkers ? args : withWorkers(args))], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  return new Promise((resolveStart, reject) => {
    // Wide: a start takes a second on a quiet machine, far longer on a busy one (issue 32 item 16).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line within ${READY_LIMIT_MS / 1000} s; stdout=${out} stderr=${err}`));
    }, READY_LIMIT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /Divan listening on (http:\/\/\S+\/)\n/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({
          child,
          url: match[1]!.replace(/\/$/, ''),
          stdout: () => out,
          stderr: () => err,
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready; stdout=${out} stderr=${err}`));
    });
  });
}

/** Runs the binary to completion (for start-up failures). */
export function runDivan(args: string[], env: Record<string, string> = {}, timeoutMs = 60000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [MAIN, ...withWorkers(args)], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}


/** A fresh data directory with one server admin, the arguments that start the binary on it, and its removal. */
export function adminDataDir(prefix: string): { args: string[]; auth: [string, string]; remove(): void } {
  const data = mkdtempSync(join(tmpdir(), prefix));
  const config = join(data, 'admin.ini');
  writeFileSync(config, '[admins]\nboss = b0ss-pass\n');
  return {
    args: ['--port', '0', '--data', data, '--config', config],
    auth: ['boss', 'b0ss-pass'],
    remove: () => rmSync(data, { recursive: true, force: true }),
  };
}
