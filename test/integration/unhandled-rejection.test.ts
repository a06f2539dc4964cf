// Issue 32 item 2: a promise rejected with nobody awaiting it must not end a server process (the
// whole server, a worker, or the primary): it is logged and the process keeps serving. The
// rejection is planted by a preload module (NODE_OPTIONS --import), so the binary runs unchanged,
// and fired by SIGUSR2 once the server is up (a rejection while modules load is a start-up failure).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { request } from '../support/http.js';
import { adminDataDir, startDivan } from '../support/process.js';
import { eventually } from '../support/replication-pair.js';

const PROBE = 'issue-32-probe';
const PRELOAD = `--import=data:text/javascript,process.on('SIGUSR2',()=>Promise.reject(Error('${PROBE}')))`;

/** The process and its children (the workers of `--workers 2`). */
function processTree(pid: number): number[] {
  let children = '';
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  } catch {
    // pgrep exits 1 when there is no child.
  }
  return [pid, ...children.split('\n').filter(Boolean).map(Number)];
}

describe('the process-level safety net', () => {
  for (const workers of ['1', '2']) {
    test(`issue 32 item 2: an unhandled rejection is logged and the server keeps serving (--workers ${workers})`, async () => {
      const { args, auth, remove } = adminDataDir('divan-rejection-');
      const divan = await startDivan(['--workers', workers, ...args], { NODE_OPTIONS: PRELOAD });
      let exited: number | null | undefined;
      divan.child.once('exit', (code) => (exited = code));
      try {
        const pids = processTree(divan.child.pid!);
        // The server, or the primary, each worker and as many heavy-lane processes (docs/workers.md).
        const expected = workers === '1' ? 1 : 1 + 2 * Number(workers);
        assert.equal(pids.length, expected, `processes: ${pids.join(' ')}`);
        for (const pid of pids) process.kill(pid, 'SIGUSR2');
        // One log line per process that got the probe.
        await eventually(async () => (divan.stderr().split(PROBE).length - 1 >= expected ? true : undefined), 15000, `${expected} logged rejections`);
        assert.match(divan.stderr(), /unhandled promise rejection, kept serving: Error: issue-32-probe/);
        for (let i = 0; i < 4; i++) assert.equal((await request(divan.url, '/_up', { auth })).status, 200);
        assert.equal(exited, undefined, 'the server process is still running');
        assert.doesNotMatch(divan.stderr(), /exited with/, 'no worker died');
      } finally {
        await divan.stop('SIGTERM');
        remove();
      }
    });
  }
});
