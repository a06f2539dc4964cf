import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { request } from '../support/http.js';
import { runDivan, startDivan } from '../support/process.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'divan-bin-'));
  dirs.push(dir);
  return dir;
}

describe('the real binary', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('with no admin configured it creates one, prints its password once and stores only the hash', async () => {
    const data = tempDir();
    const divan = await startDivan(['--port', '0', '--data', data]);
    try {
      const match = /created "admin" with password (\S+)/.exec(divan.stdout());
      assert.ok(match, divan.stdout());
      const password = match[1]!;
      const local = readFileSync(join(data, 'local.ini'), 'utf8');
      assert.doesNotMatch(local, new RegExp(password));
      assert.match(local, /^admin = -pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},600000$/m);
      const res = await request(divan.url, '/_all_dbs', { auth: ['admin', password] });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, ['_replicator', '_users']);
    } finally {
      assert.equal(await divan.stop('SIGTERM'), 0);
    }
    const second = await startDivan(['--port', '0', '--data', data]);
    try {
      assert.doesNotMatch(second.stdout(), /password/, 'the password is printed only once');
    } finally {
      assert.equal(await second.stop('SIGINT'), 0, 'SIGINT also drains and exits 0');
    }
  });

  test('restart on the same data dir keeps databases, documents, _security, config changes and the uuid', async () => {
    const data = tempDir();
    const env = { COUCHDB_USER: 'boss', COUCHDB_PASSWORD: 'b0ss-pass' };
    const auth: [string, string] = ['boss', 'b0ss-pass'];
    const first = await startDivan(['--port', '0', '--data', data], env);
    let uuid: string;
    let rev: string;
    try {
      assert.doesNotMatch(first.stdout(), /created "admin"/, 'COUCHDB_USER is the admin');
      uuid = (await request(first.url, '/')).body.uuid;
      assert.equal((await request(first.url, '/kept', { method: 'PUT', auth })).status, 201);
      rev = (await request(first.url, '/kept/doc', { method: 'PUT', auth, body: { v: 1 } })).body.rev;
      await request(first.url, '/kept/_security', { method: 'PUT', auth, body: { members: { names: ['someone'] } } });
      assert.equal((await request(first.url, '/_node/_local/_config/uuids/max_count', { method: 'PUT', auth, body: '"7"' })).status, 200);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const second = await startDivan(['--port', '0', '--data', data], env);
    try {
      assert.equal((await request(second.url, '/')).body.uuid, uuid);
      const doc = await request(second.url, '/kept/doc', { auth });
      assert.deepEqual(doc.body, { _id: 'doc', _rev: rev, v: 1 });
      assert.deepEqual((await request(second.url, '/kept/_security', { auth })).body, { members: { names: ['someone'] } });
      assert.equal((await request(second.url, '/_uuids?count=8')).status, 400, 'max_count 7 survived');
      const stale = await request(second.url, '/kept/doc', { method: 'PUT', auth, body: { v: 2 } });
      assert.equal(stale.status, 409);
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  test('a --config file is layered and is the writable layer', async () => {
    const data = tempDir();
    const base = join(data, 'base.ini');
    const mine = join(data, 'mine.ini');
    writeFileSync(base, '[uuids]\nmax_count = 3\n[admins]\nops = 0ps-pass\n');
    writeFileSync(mine, '[uuids]\nmax_count = 5\n');
    const divan = await startDivan(['--port', '0', '--data', data, '--config', base, '--config', mine]);
    try {
      assert.equal((await request(divan.url, '/_uuids?count=5')).status, 200);
      assert.equal((await request(divan.url, '/_uuids?count=6')).status, 400);
      assert.match(readFileSync(mine, 'utf8'), /^ops = -pbkdf2:sha256-/m, 'the hashed admin went to the writable (last) file');
      assert.equal((await request(divan.url, '/_all_dbs', { auth: ['ops', '0ps-pass'] })).status, 200);
    } finally {
      await divan.stop();
    }
  });

  test('a bad flag is one line on stderr and exit code 2', async () => {
    const res = await runDivan(['--nope']);
    assert.equal(res.code, 2);
    assert.equal(res.stderr.trim().split('\n').length, 1);
    assert.match(res.stderr, /^Divan: .*--nope/);
    const port = await runDivan(['--port', 'eighty']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /^Divan: --port must be a number/);
  });

  test('an unreadable ini file is one line and exit 1', async () => {
    const data = tempDir();
    const res = await runDivan(['--port', '0', '--data', data, '--config', join(data, 'missing.ini')]);
    assert.equal(res.code, 1);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /missing\.ini/);
    const dirAsFile = await runDivan(['--port', '0', '--data', data, '--config', data]);
    assert.equal(dirAsFile.code, 1);
    assert.equal(dirAsFile.stderr.trim().split('\n').length, 1, dirAsFile.stderr);
  });

  test('a port in use is one line and exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const res = await runDivan(['--port', String(port), '--data', tempDir()], { COUCHDB_USER: 'a', COUCHDB_PASSWORD: 'b' });
      assert.equal(res.code, 1);
      assert.equal(res.stderr.trim(), `Divan: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      blocker.close();
    }
  });

  test('an unwritable data dir is one line and exit 1', async () => {
    const parent = tempDir();
    const file = join(parent, 'plain-file');
    writeFileSync(file, 'x');
    chmodSync(file, 0o444);
    const res = await runDivan(['--port', '0', '--data', join(file, 'data')]);
    assert.equal(res.code, 1);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /^Divan: data directory .* is not writable/);
  });

  test('COUCHDB_SECRET sets [chttpd_auth] secret', async () => {
    const data = tempDir();
    const divan = await startDivan(['--port', '0', '--data', data], { COUCHDB_SECRET: 'f'.repeat(32), COUCHDB_USER: 'a', COUCHDB_PASSWORD: 'b' });
    try {
      assert.match(readFileSync(join(data, 'local.ini'), 'utf8'), /^secret = f{32}$/m);
    } finally {
      await divan.stop();
    }
  });
});
