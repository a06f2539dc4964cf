/**
 * Issue 20 on several nodes: two Divan nodes on one PostgreSQL store follow the same `_replicator`
 * document, exactly one runs its job (the lease holder), and when that node stops the other takes
 * the job over and goes on copying.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashAdminPassword } from '../../src/users/password-hash.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';
import { eventually } from '../support/replication-pair.js';

const ADMIN: [string, string] = ['ops', 'ops-pass'];

describe('replication jobs on two nodes sharing PostgreSQL', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const url = POSTGRES_TEST_URL!;
  const schema = uniqueSchema();
  const dirs: string[] = [];
  let nodes: RunningDivan[] = [];

  before(async () => {
    const adminHash = await hashAdminPassword(ADMIN[1], 'sha256', 1000);
    // The same uuid on every node, so they compute the same replication id (as CouchDB asks of its nodes).
    const ini = ['[divan]', 'storage = postgres', `postgres_schema = ${schema}`, '[couchdb]', 'uuid = 0f0e0d0c0b0a09080706050403020100', '[admins]', `${ADMIN[0]} = ${adminHash}`, '[chttpd_auth]', 'iterations = 1000', ''].join('\n');
    const start = (): Promise<RunningDivan> => {
      const dir = mkdtempSync(join(tmpdir(), 'divan-repl-node-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'node.ini'), ini);
      return startDivan(['--port', '0', '--data', dir, '--config', join(dir, 'node.ini')], { DIVAN_POSTGRES_URL: url });
    };
    nodes = await Promise.all([start(), start()]);
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await dropSchema(url, schema);
  });

  const jobsOn = async (node: RunningDivan): Promise<number> => (await request(node.url, '/_scheduler/jobs', { auth: ADMIN })).body.total_rows as number;

  test('one node runs the job; when it stops the other takes it over', async () => {
    const [first] = nodes as [RunningDivan, RunningDivan];
    const endpoint = (db: string): string => `${first.url.replace('://', `://${ADMIN[0]}:${ADMIN[1]}@`)}/${db}`;
    await request(first.url, '/src', { method: 'PUT', auth: ADMIN });
    await request(first.url, '/src/one', { method: 'PUT', auth: ADMIN, body: {} });
    await request(first.url, '/_replicator/follow', { method: 'PUT', auth: ADMIN, body: { source: endpoint('src'), target: endpoint('dst'), create_target: true, continuous: true } });
    await eventually(async () => ((await request(first.url, '/dst/one', { auth: ADMIN })).status === 200 ? true : undefined), 20000, 'the first copy');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const counts = await Promise.all(nodes.map(jobsOn));
    assert.deepEqual(counts.slice().sort(), [0, 1], `jobs per node: ${counts}`);

    const owner = nodes[counts.indexOf(1)]!;
    const other = nodes[counts.indexOf(0)]!;
    await owner.stop();
    nodes = [other];
    await request(other.url, '/src/two', { method: 'PUT', auth: ADMIN, body: {} }).catch(() => undefined);
    // The stopped node's endpoint URLs point at it: the job on the other node now fails to reach
    // them and retries, which still shows that it took the job over.
    await eventually(async () => ((await jobsOn(other)) === 1 ? true : undefined), 30000, 'the takeover');
  });
});
