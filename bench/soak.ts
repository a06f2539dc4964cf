/**
 * `npm run soak [-- --minutes N] [-- --warmup-seconds N] [-- --clients N] [-- --cycles N] [-- --skip-crash] [-- --skip-soak] [-- --skip-freeze]`
 *
 * The full form of the hardening tests whose short forms run in `npm test`:
 * - the soak: a mixed load (logins, cookie and Basic requests, JWTs reused and fresh, wrong
 *   passwords, document reads and writes) on the real binary for minutes (default 4, the first
 *   minute excluded as warm-up), resident memory sampled every second; no 5xx, no network error,
 *   no growth trend. Caches keep their default bounds here (10000 entries).
 * - crash safety: SIGKILL in the middle of a write storm, restart on the same data, for many rounds
 *   (default 20 on SQLite, 10 on PostgreSQL when a server answers): every acknowledged write found,
 *   SQLite's integrity check passing, every ini file parsing.
 *
 * - no freeze: while one client sends each request that once froze the server (test/support/
 *   hardening-freeze.ts), `GET /_up` from another answers within 100 ms at the 99th percentile.
 *
 * Exits 1 when anything failed. `HARDENING_SEED` replays the same decisions.
 */
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL } from '../test/support/backends.js';
import { runCrashCycles, type CrashReport } from '../test/support/hardening-crash.js';
import { FREEZE_SCENARIOS, freezeProblems, runFreezeCheck } from '../test/support/hardening-freeze.js';
import { memoryProblems, runSoak } from '../test/support/hardening-soak.js';
import { BASE_SEED } from '../test/support/hardening.js';

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

const minutes = Number(flag('--minutes') ?? 4);
const warmupSeconds = Number(flag('--warmup-seconds') ?? 60);
const clients = Number(flag('--clients') ?? 8);
const cycles = Number(flag('--cycles') ?? 20);
const skipCrash = process.argv.includes('--skip-crash');
const skipSoak = process.argv.includes('--skip-soak');
const skipFreeze = process.argv.includes('--skip-freeze');
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const problems: string[] = [];

if (!skipSoak) {
  say(`# Soak: ${minutes} min, ${clients} clients, warm-up ${warmupSeconds} s, seed ${BASE_SEED}`);
  const durationMs = minutes * 60_000;
  const warmupMs = warmupSeconds * 1000;
  const report = await runSoak({ durationMs, warmupMs, clients, users: 50, seed: BASE_SEED, cacheSize: 10_000, log: say });
  say(`requests: ${report.requests} in ${(report.durationMs / 1000).toFixed(0)} s (${Math.round(report.requests / (report.durationMs / 1000))}/s)`);
  say(`statuses: ${JSON.stringify(report.statuses)}`);
  say(`operations: ${JSON.stringify(report.operations)}`);
  if (report.failureCount > 0) problems.push(`soak: ${report.failureCount} failures: ${report.failures.join(' | ')}`);
  const m = report.memory;
  if (m) {
    say(`RSS (MiB): start ${m.startMiB.toFixed(1)}, after warm-up ${m.afterWarmupMiB.toFixed(1)}, end ${m.endMiB.toFixed(1)}, peak ${m.peakMiB.toFixed(1)}`);
    say(`after warm-up: growth ${m.growthMiB.toFixed(1)} MiB (last quarter median − first quarter median), trend ${m.slopeMiBPerMinute.toFixed(2)} MiB/min over ${m.samples} samples`);
    say(`series (s: MiB): ${m.series.filter(([t]) => t % 10 === 0).map(([t, rss]) => `${t}: ${rss}`).join(', ')}`);
    problems.push(...memoryProblems(m, report.durationMs, warmupMs).map((problem) => `soak: ${problem}`));
  } else {
    say('no /proc on this system: memory not sampled');
  }
}

function describeCrash(report: CrashReport): string {
  const { acknowledged: a, found: f } = report;
  return (
    `${report.backend}: ${report.cycles} SIGKILLs in ${(report.durationMs / 1000).toFixed(0)} s; ` +
    `${report.acknowledgedWrites} write requests acknowledged, leaving ${a.total} items (docs ${a.documents}, users ${a.users}, config keys ${a.config}); ` +
    `found ${f.total} (docs ${f.documents}, users ${f.users}, config keys ${f.config}); ${report.unacknowledged} writes in flight at the kills; ` +
    `${report.integrityChecks} integrity checks passed, ${report.iniFilesParsed} ini files parsed`
  );
}

if (!skipCrash) {
  say(`# Crash safety: ${cycles} rounds on SQLite${POSTGRES_TEST_URL ? `, ${Math.ceil(cycles / 2)} on PostgreSQL` : ''}`);
  const runs: Array<Parameters<typeof runCrashCycles>[0]> = [{ backend: 'sqlite', cycles, writers: 8, stormMs: [200, 3000], seed: BASE_SEED }];
  if (POSTGRES_TEST_URL) runs.push({ backend: 'postgres', postgresUrl: POSTGRES_TEST_URL, cycles: Math.ceil(cycles / 2), writers: 8, stormMs: [200, 3000], seed: BASE_SEED + 1 });
  else say(`PostgreSQL skipped: ${POSTGRES_SKIP_REASON}`);
  for (const options of runs) {
    const report = await runCrashCycles({ ...options, log: say });
    say(describeCrash(report));
    problems.push(...report.problems.map((problem) => `crash ${report.backend}: ${problem}`));
    if (report.found.total !== report.acknowledged.total) problems.push(`crash ${report.backend}: found ${report.found.total} of ${report.acknowledged.total}`);
  }
}

if (!skipFreeze) {
  const scenarios = FREEZE_SCENARIOS;
  say(`# No freeze: GET /_up while each of ${scenarios.length} freezing requests runs (p99 within 100 ms)`);
  const reports = await runFreezeCheck(scenarios, say);
  problems.push(...reports.flatMap((report) => freezeProblems(report)).map((problem) => `freeze: ${problem}`));
}

if (problems.length > 0) {
  say(`\nFAILED:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
  process.exit(1);
}
say('\nOK');
