// Issue 34 item 1: on a PostgreSQL cluster, /_membership lists every node and /_node/{name}/…
// answers with the named node's own figures, whichever node is asked (CouchDB's chttpd_node).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashAdminPassword } from '../../src/users/password-hash.js';
import { POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, dropSchema, uniqueSchema } from '../support/backends.js';
import { request } from '../support/http.js';
import { startDivan, type RunningDivan } from '../support/process.js';

const ADMIN: [string, string] = ['ops', 'ops-pass'];
const NAMES = ['n1@127.0.0.1', 'n2@127.0.0.1'];

describe('two Divan nodes on one PostgreSQL answer for each other', { skip: POSTGRES_TEST_URL === undefined ? `no PostgreSQL: ${POSTGRES_SKIP_REASON}` : false }, () => {
  const url = POSTGRES_TEST_URL!;
  const schema = uniqueSchema();
  const dirs: string[] = [];
  let nodes: RunningDivan[] = [];
  let a: string, b: string;
  const stopped = new Set<RunningDivan>();
  const deletesSeenBy = async (asked: string, node: string): Promise<number> =>
    (await request(asked, `/_node/${node}/_stats/couchdb/httpd_request_methods/DELETE`, { auth: ADMIN })).body?.value ?? 0;

  before(async () => {
    const adminHash = await hashAdminPassword(ADMIN[1], 'sha256', 1000);
    const started = await Promise.allSettled(
      NAMES.map((name) => {
        const dir = mkdtempSync(join(tmpdir(), 'divan-peer-'));
        dirs.push(dir);
        const ini = ['[divan]', 'storage = postgres', `postgres_schema = ${schema}`, `node_name = ${name}`, '[admins]', `${ADMIN[0]} = ${adminHash}`, '[chttpd_auth]', 'iterations = 1000', '[log]', 'level = error', ''];
        writeFileSync(join(dir, 'node.ini'), ini.join('\n'));
        return startDivan(['--port', '0', '--data', dir, '--config', join(dir, 'node.ini')], { DIVAN_POSTGRES_URL: url });
      }),
    );
    nodes = started.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
    for (const each of started) if (each.status === 'rejected') throw each.reason;
    [a, b] = nodes.map((node) => node.url) as [string, string];
  });

  after(async () => {
    await Promise.all(nodes.filter((node) => !stopped.has(node)).map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await dropSchema(url, schema);
  });

  test('/_membership lists both nodes, asked of either', async () => {
    for (const asked of [a, b]) {
      const res = await request(asked, '/_membership', { auth: ADMIN });
      assert.deepEqual(res.body, { all_nodes: NAMES, cluster_nodes: NAMES });
    }
  });

  test("/_node/{other}/_stats is the other node's count, not the asked one's", async () => {
    const [bBefore, aBefore] = [await deletesSeenBy(a, NAMES[1]!), await deletesSeenBy(a, NAMES[0]!)];
    assert.equal(bBefore, await deletesSeenBy(b, '_local'), 'A relays what B itself reports');
    for (let i = 0; i < 3; i++) assert.equal((await request(b, '/no-such-db', { method: 'DELETE', auth: ADMIN })).status, 404);
    assert.equal(await deletesSeenBy(a, NAMES[1]!), bBefore + 3, "B's DELETEs seen through A");
    assert.equal(await deletesSeenBy(a, NAMES[0]!), aBefore, "A's own count is unchanged");
  });

  test('_prometheus, _system, _versions and the name of the other node, through A', async () => {
    const scrape = await request(a, `/_node/${NAMES[1]}/_prometheus`, { auth: ADMIN });
    assert.equal(scrape.status, 200);
    assert.match(String(scrape.headers['content-type']), /^text\/plain/);
    assert.match(scrape.text, /couchdb_httpd_requests_total/);
    const system = await request(a, `/_node/${NAMES[1]}/_system`, { auth: ADMIN });
    assert.equal(system.status, 200);
    assert.equal(typeof system.body.memory.processes, 'number');
    assert.equal((await request(a, `/_node/${NAMES[1]}/_versions`, { auth: ADMIN })).body.javascript_engine.name, 'quickjs');
    assert.deepEqual((await request(a, `/_node/${NAMES[1]}`, { auth: ADMIN })).body, { name: NAMES[1] });
    assert.equal((await request(a, `/_node/${NAMES[1]}/_nothing`, { auth: ADMIN })).status, 404);
  });

  test("who may ask is the asked node's rule: anonymous gets 401 before any node is reached", async () => {
    const res = await request(a, `/_node/${NAMES[1]}/_stats`);
    assert.equal(res.status, 401);
    assert.equal((await request(a, '/_node/n9@127.0.0.1/_stats', { auth: ADMIN })).status, 404);
  });

  test('a node that stopped answering is reported down with 412 nodedown, as CouchDB', async () => {
    await nodes[1]!.stop();
    stopped.add(nodes[1]!);
    const res = await request(a, `/_node/${NAMES[1]}/_system`, { auth: ADMIN });
    // Within its last heartbeat's 15 s it is still a member that does not answer; after, no such node.
    if (res.status === 412) assert.deepEqual(res.body, { error: 'nodedown', reason: `${NAMES[1]} is down` });
    else assert.equal(res.status, 404, res.text);
  });
});
