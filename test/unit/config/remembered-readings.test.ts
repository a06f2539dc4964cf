import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Config } from '../../../src/config/config.js';

/*
 * Typed readings and section records are remembered between changes (they are read on every
 * request): every kind of change must still be seen at once.
 */
const directories: string[] = [];
after(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

async function load(local: string, defaults = ''): Promise<Config> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-remembered-'));
  directories.push(dir);
  fs.writeFileSync(path.join(dir, 'default.ini'), defaults);
  fs.writeFileSync(path.join(dir, 'local.ini'), local);
  return Config.load({ defaultsFile: path.join(dir, 'default.ini'), files: [], writableFile: path.join(dir, 'local.ini') });
}

describe('remembered configuration readings', () => {
  it('a boolean read before a set, a delete and a change from another worker follows each of them', async () => {
    const config = await load('');
    assert.equal(config.getBoolean('chttpd', 'require_valid_user'), false);
    await config.set('chttpd', 'require_valid_user', 'true');
    assert.equal(config.getBoolean('chttpd', 'require_valid_user'), true);
    await config.delete('chttpd', 'require_valid_user');
    assert.equal(config.getBoolean('chttpd', 'require_valid_user'), false);
    config.applyRemote('chttpd', 'require_valid_user', 'true');
    assert.equal(config.getBoolean('chttpd', 'require_valid_user'), true);
    await config.set('chttpd', 'require_valid_user', 'false', { persist: false });
    assert.equal(config.getBoolean('chttpd', 'require_valid_user'), false);
  });

  it('an integer of [chttpd_auth] follows a change made under the old section name', async () => {
    const config = await load('');
    const before = config.authInteger('timeout');
    await config.set('couch_httpd_auth', 'timeout', String(before + 1));
    assert.equal(config.authInteger('timeout'), before + 1);
    await config.set('chttpd_auth', 'timeout', '42');
    assert.equal(config.authInteger('timeout'), 42);
    assert.equal(config.getInteger('chttpd', 'max_http_request_size'), config.getInteger('chttpd', 'max_http_request_size'));
  });

  it('the same key read as a string and as a number keeps both readings apart', async () => {
    const config = await load('[chttpd_auth]\ntimeout = 77\n');
    assert.equal((config.authString as (key: string) => string)('timeout'), '77');
    assert.equal(config.authInteger('timeout'), 77);
    assert.equal(config.authBoolean('allow_persistent_cookies'), config.authBoolean('allow_persistent_cookies'));
  });

  it('a fallback given by the caller is never remembered for another caller', async () => {
    const config = await load('');
    assert.equal(config.getBoolean('s', 'unset', true), true);
    assert.equal(config.getBoolean('s', 'unset', false), false);
    assert.equal(config.getInteger('s', 'unset', 1), 1);
    assert.equal(config.getInteger('s', 'unset', 2), 2);
  });

  it('section records are frozen, shared until a change, then rebuilt with it', async () => {
    const config = await load('[vendor]\nb = 2\na = 1\n');
    const first = config.section('vendor');
    assert.deepEqual(Object.keys(first), ['a', 'b']);
    assert.ok(Object.isFrozen(first));
    assert.equal(config.section('vendor'), first);
    await config.set('vendor', 'c', '3');
    assert.deepEqual(config.section('vendor'), { a: '1', b: '2', c: '3' });
    assert.deepEqual(config.section('no-such-section'), {});
  });
});
