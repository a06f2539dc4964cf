/**
 * Crash safety, short form (the full form, with many more kill rounds, is `npm run soak`): the
 * real binary is SIGKILLed in the middle of a write storm of documents, bulk documents, user
 * creations and `_config` changes, then restarted on the same data directory. Every acknowledged
 * write must be there, SQLite's integrity check must pass and every ini file must parse; the same
 * on a PostgreSQL node when a server answers.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL } from '../support/backends.js';
import { runCrashCycles, type CrashReport } from '../support/hardening-crash.js';
import { BASE_SEED } from '../support/hardening.js';

const CYCLES = Number(process.env['HARDENING_CRASH_CYCLES'] ?? 3);

function summary(report: CrashReport): string {
  const { acknowledged: a, found: f } = report;
  return `${report.backend}: ${report.cycles} SIGKILLs in ${(report.durationMs / 1000).toFixed(1)} s; ${report.acknowledgedWrites} write requests acknowledged, leaving ${a.total} items (docs ${a.documents}, users ${a.users}, config ${a.config}), found ${f.total} (docs ${f.documents}, users ${f.users}, config ${f.config}); ${report.unacknowledged} in flight at kills; ${report.integrityChecks} integrity checks, ${report.iniFilesParsed} ini files parsed`;
}

function assertSurvived(report: CrashReport): void {
  assert.deepEqual(report.problems, []);
  assert.ok(report.acknowledged.total > 0, 'the storm wrote something');
  assert.ok(report.acknowledged.documents > 0 && report.acknowledged.users > 0 && report.acknowledged.config > 0, JSON.stringify(report.acknowledged));
  assert.deepEqual(report.found, report.acknowledged, 'every acknowledged write was found');
  assert.ok(report.iniFilesParsed >= report.cycles + 1);
}

describe('crash safety: SIGKILL during a write storm, restart on the same data', () => {
  test('SQLite', async (t) => {
    const report = await runCrashCycles({ backend: 'sqlite', cycles: CYCLES, writers: 6, stormMs: [300, 1200], seed: BASE_SEED, log: (line) => t.diagnostic(line) });
    t.diagnostic(summary(report));
    assertSurvived(report);
    assert.equal(report.integrityChecks, CYCLES + 1, 'integrity_check after every kill and after the final stop');
  });

  test('PostgreSQL', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, async (t) => {
    const report = await runCrashCycles({ backend: 'postgres', postgresUrl: POSTGRES_TEST_URL!, cycles: Math.max(2, CYCLES - 1), writers: 6, stormMs: [300, 1200], seed: BASE_SEED + 1, log: (line) => t.diagnostic(line) });
    t.diagnostic(summary(report));
    assertSurvived(report);
  });
});
