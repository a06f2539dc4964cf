import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { ConfigLoadError } from '../../../src/config/config-file.js';
import { Config, type ConfigChange } from '../../../src/config/config.js';
import { CouchError } from '../../../src/errors/couch-error.js';

const directories: string[] = [];
after(() => {
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

function tempDir(): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'divan-'));
  directories.push(directory);
  return directory;
}

/** Writes each `name: text` pair into a fresh directory and returns the paths by name. */
function files(contents: Record<string, string>): { dir: string; path: (name: string) => string } {
  const dir = tempDir();
  for (const [name, text] of Object.entries(contents)) fs.writeFileSync(path.join(dir, name), text);
  return { dir, path: (name) => path.join(dir, name) };
}

async function loadFrom(
  contents: Record<string, string>,
  layout: { files?: string[]; writable?: string } = {},
): Promise<{ config: Config; path: (name: string) => string; reload: () => Promise<Config> }> {
  const { path: at } = files({ 'default.ini': '', ...contents });
  const options = {
    defaultsFile: at('default.ini'),
    files: (layout.files ?? []).map(at),
    writableFile: at(layout.writable ?? 'local.ini'),
  };
  return { config: await Config.load(options), path: at, reload: () => Config.load(options) };
}

describe('Config layers', () => {
  it('later layers win: defaults, each file in order, then the writable file', async () => {
    const { config } = await loadFrom(
      {
        'default.ini': '[s]\na = default\nb = default\nc = default\nd = default\n',
        'one.ini': '[s]\nb = one\nc = one\nd = one\n',
        'two.ini': '[s]\nc = two\nd = two\n',
        'local.ini': '[s]\nd = local\n',
      },
      { files: ['one.ini', 'two.ini'] },
    );
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((key) => config.get('s', key)),
      ['default', 'one', 'two', 'local'],
    );
    assert.equal(config.get('s', 'missing'), undefined);
    assert.equal(config.get('missing', 'a'), undefined);
  });

  it('files are layered in the order given, not by name', async () => {
    const { config } = await loadFrom(
      { 'a.ini': '[s]\nk = a\n', 'b.ini': '[s]\nk = b\n' },
      { files: ['b.ini', 'a.ini'] },
    );
    assert.equal(config.get('s', 'k'), 'a');
  });

  it('a writable file that is also the last --config file is a single layer', async () => {
    const { config, path: at, reload } = await loadFrom(
      { 'one.ini': '[s]\nk = one\n', 'mine.ini': '[s]\nk = mine\n' },
      { files: ['one.ini', 'mine.ini'], writable: 'mine.ini' },
    );
    assert.equal(config.writableFile, at('mine.ini'));
    assert.equal(config.get('s', 'k'), 'mine');
    // Were it loaded twice, the untouched copy would keep answering "mine".
    assert.equal(await config.delete('s', 'k'), 'mine');
    assert.equal(config.get('s', 'k'), 'one');
    assert.equal((await reload()).get('s', 'k'), 'one');
  });

  it('a missing writable file is an empty layer, created with owner-only access on the first write', async () => {
    const { config, path: at } = await loadFrom({ 'default.ini': '[s]\nk = default\n' });
    assert.equal(fs.existsSync(at('local.ini')), false);
    assert.equal(config.get('s', 'k'), 'default');
    await config.set('s', 'k', 'mine');
    assert.equal(fs.readFileSync(at('local.ini'), 'utf8'), '[s]\nk = mine\n');
    if (process.platform !== 'win32') assert.equal(fs.statSync(at('local.ini')).mode & 0o777, 0o600);
  });

  it('section() and all() are the merged view with sorted names', async () => {
    const { config } = await loadFrom(
      {
        'default.ini': '[zeta]\nz = 1\n[alpha]\nm = default\nb = default\n',
        'local.ini': '[alpha]\nm = local\na = local\n',
      },
    );
    assert.deepEqual(Object.keys(config.section('alpha')), ['a', 'b', 'm']);
    assert.deepEqual(config.section('alpha'), { a: 'local', b: 'default', m: 'local' });
    assert.deepEqual(config.section('missing'), {});
    const all = config.all();
    assert.deepEqual(Object.keys(all), ['alpha', 'zeta']);
    assert.deepEqual(all, { alpha: { a: 'local', b: 'default', m: 'local' }, zeta: { z: '1' } });
  });

  it('a key named __proto__ is an ordinary key in section()', async () => {
    const { config } = await loadFrom({ 'local.ini': '[s]\n__proto__ = x\n' });
    const section = config.section('s');
    assert.equal(Object.getOwnPropertyDescriptor(section, '__proto__')?.value, 'x');
    assert.equal(Object.getPrototypeOf(section), Object.prototype);
  });

  it('reads are served from memory, not by re-reading the files', async () => {
    const { config, path: at } = await loadFrom({ 'local.ini': '[s]\nk = loaded\n' });
    fs.writeFileSync(at('local.ini'), '[s]\nk = edited behind our back\n');
    assert.equal(config.get('s', 'k'), 'loaded');
  });

  it('malformed lines are skipped, not fatal', async () => {
    const { config } = await loadFrom({
      'default.ini': 'stray = before any section\n[s\n= x\ngarbage\n[s]\nk ;= v\ngood = 1\n[t]oops\nalso = 2\nempty =\n',
    });
    assert.deepEqual(config.all(), { s: { good: '1', also: '2' } });
  });
});

describe('Config.getAuth', () => {
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    [
      'user [chttpd_auth] beats user [couch_httpd_auth]',
      { 'default.ini': '', 'local.ini': '[chttpd_auth]\nt = new\n[couch_httpd_auth]\nt = legacy\n' },
      'new',
    ],
    [
      'user [couch_httpd_auth] beats a default in [chttpd_auth]',
      { 'default.ini': '[chttpd_auth]\nt = 600\n', 'local.ini': '[couch_httpd_auth]\nt = 60\n' },
      '60',
    ],
    [
      'a --config file counts as a user layer',
      { 'default.ini': '[chttpd_auth]\nt = 600\n', 'one.ini': '[couch_httpd_auth]\nt = 60\n' },
      '60',
    ],
    [
      'default [chttpd_auth] beats default [couch_httpd_auth]',
      { 'default.ini': '[couch_httpd_auth]\nt = legacy\n[chttpd_auth]\nt = new\n' },
      'new',
    ],
    ['default [couch_httpd_auth] is the last resort', { 'default.ini': '[couch_httpd_auth]\nt = legacy\n' }, 'legacy'],
    ['undefined when no layer sets it', { 'default.ini': '[other]\nt = 1\n' }, undefined],
  ];
  for (const [rule, contents, expected] of cases) {
    it(rule, async () => {
      const { config } = await loadFrom({ 'one.ini': '', ...contents }, { files: ['one.ini'] });
      assert.equal(config.getAuth('t'), expected);
    });
  }

  it('sees a write to [couch_httpd_auth] over the default', async () => {
    const { config } = await loadFrom({ 'default.ini': '[chttpd_auth]\ntimeout = 600\n' });
    await config.set('couch_httpd_auth', 'timeout', '60');
    assert.equal(config.getAuth('timeout'), '60');
    assert.equal(config.authInteger('timeout', 1), 60);
  });

  it('typed auth getters use the same fallback and their own default', async () => {
    const { config } = await loadFrom({
      'default.ini': '[chttpd_auth]\nrequire_valid_user = false\n',
      'local.ini': '[couch_httpd_auth]\nrequire_valid_user = true\nsecret = s3\nbad_number = 1x\n',
    });
    assert.equal(config.authBoolean('require_valid_user', false), true);
    assert.equal(config.authString('secret', 'none'), 's3');
    assert.equal(config.authString('missing', 'none'), 'none');
    assert.equal(config.authInteger('bad_number', 7), 7);
    assert.equal(config.authBoolean('missing', true), true);
  });
});

describe('Config typed getters', () => {
  const booleans: Array<[string, boolean | 'fallback']> = [
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['false', false],
    ['FALSE', false],
    ['yes', 'fallback'],
    ['1', 'fallback'],
    ['truee', 'fallback'],
  ];
  for (const [text, expected] of booleans) {
    it(`getBoolean reads ${JSON.stringify(text)}`, async () => {
      const { config } = await loadFrom({ 'local.ini': `[s]\nk = ${text}\n` });
      if (expected === 'fallback') {
        assert.equal(config.getBoolean('s', 'k', true), true);
        assert.equal(config.getBoolean('s', 'k', false), false);
      } else {
        assert.equal(config.getBoolean('s', 'k', !expected), expected);
      }
    });
  }

  const integers: Array<[string, number | 'fallback']> = [
    ['42', 42],
    ['-7', -7],
    ['007', 7],
    ['-0', 0],
    ['4294967296', 4294967296],
    ['+5', 'fallback'],
    ['4.2', 'fallback'],
    ['1e3', 'fallback'],
    ['0x10', 'fallback'],
    ['12abc', 'fallback'],
    ['99999999999999999999', 'fallback'],
  ];
  for (const [text, expected] of integers) {
    it(`getInteger reads ${JSON.stringify(text)}`, async () => {
      const { config } = await loadFrom({ 'local.ini': `[s]\nk = ${text}\n` });
      const read = config.getInteger('s', 'k', -123);
      assert.ok(Object.is(read, expected === 'fallback' ? -123 : expected), `got ${read}`);
    });
  }

  it('missing keys take the fallback', async () => {
    const { config } = await loadFrom({});
    assert.equal(config.getString('s', 'k', 'dflt'), 'dflt');
    assert.equal(config.getBoolean('s', 'k', true), true);
    assert.equal(config.getInteger('s', 'k', 5), 5);
  });

  it('getString returns the raw string', async () => {
    const { config } = await loadFrom({ 'local.ini': '[s]\nk = {couch_httpd_auth, handler}\n' });
    assert.equal(config.getString('s', 'k', 'dflt'), '{couch_httpd_auth, handler}');
  });
});

describe('Config writes', () => {
  it('set persists to the writable file, keeps its comments, and survives a fresh load', async () => {
    const { config, path: at, reload } = await loadFrom({
      'default.ini': '[couchdb]\nmax_dbs_open = 500\n',
      'local.ini': '; my settings\n[couchdb]\n; why\nuuid = abc\n',
    });
    assert.equal(await config.set('couchdb', 'max_dbs_open', '100'), '500');
    assert.equal(await config.set('couchdb', 'max_dbs_open', '200'), '100');
    assert.equal(await config.set('new.section', 'k', 'v'), undefined);
    assert.equal(config.get('couchdb', 'max_dbs_open'), '200');
    assert.equal(
      fs.readFileSync(at('local.ini'), 'utf8'),
      '; my settings\n[couchdb]\n; why\nuuid = abc\nmax_dbs_open = 200\n\n[new.section]\nk = v\n',
    );
    const fresh = await reload();
    assert.equal(fresh.get('couchdb', 'max_dbs_open'), '200');
    assert.equal(fresh.get('new.section', 'k'), 'v');
    assert.equal(fresh.get('couchdb', 'uuid'), 'abc');
  });

  it('delete removes the line and the value falls back to the lower layers', async () => {
    const { config, path: at, reload } = await loadFrom({
      'default.ini': '[s]\nk = default\n',
      'local.ini': '[s]\nk = mine ; note\nother = 1\n',
    });
    assert.equal(await config.delete('s', 'k'), 'mine');
    assert.equal(config.get('s', 'k'), 'default');
    assert.equal(fs.readFileSync(at('local.ini'), 'utf8'), '[s]\nother = 1\n');
    assert.equal((await reload()).get('s', 'k'), 'default');
  });

  it('delete of a key the writable file does not set changes nothing and emits nothing', async () => {
    const { config, path: at } = await loadFrom({ 'default.ini': '[s]\nk = default\n' });
    const changes: ConfigChange[] = [];
    config.onChange((change) => changes.push(change));
    assert.equal(await config.delete('s', 'k'), 'default');
    assert.equal(await config.delete('s', 'missing'), undefined);
    assert.equal(config.get('s', 'k'), 'default');
    assert.equal(fs.existsSync(at('local.ini')), false);
    assert.deepEqual(changes, []);
  });

  it('refuses values the file cannot hold, with a 400 and without touching the file', async () => {
    const { config, path: at } = await loadFrom({ 'local.ini': '[s]\nk = v\n' });
    const refused: Array<[string, string, string, string]> = [
      ['s', 'k', 'x\n[admins]\nevil = 1', 'Invalid configuration value'],
      ['s', 'k', '', 'Invalid configuration value'],
      ['s', 'k', ' padded', 'Invalid configuration value'],
      ['s', 'a = b', 'v', 'Invalid configuration key'],
      ['s', '', 'v', 'Invalid configuration key'],
      ['a]b', 'k', 'v', 'Invalid configuration section'],
      ['', 'k', 'v', 'Invalid configuration section'],
    ];
    for (const [section, key, value, reason] of refused) {
      await assert.rejects(config.set(section, key, value), (error: unknown) => {
        assert.ok(error instanceof CouchError);
        assert.equal(error.status, 400);
        assert.equal(error.error, 'bad_request');
        assert.equal(error.reason, reason);
        return true;
      });
    }
    assert.equal(fs.readFileSync(at('local.ini'), 'utf8'), '[s]\nk = v\n');
    assert.equal(config.get('s', 'k'), 'v');
  });

  it('fifty concurrent sets of different keys are all persisted', async () => {
    const { config, reload } = await loadFrom({});
    const keys = Array.from({ length: 50 }, (_, i) => `key${i}`);
    await Promise.all(keys.map((key, i) => config.set(i % 2 === 0 ? 'even' : 'odd', key, `value${i}`)));
    const fresh = await reload();
    for (const [i, key] of keys.entries()) {
      assert.equal(fresh.get(i % 2 === 0 ? 'even' : 'odd', key), `value${i}`);
    }
  });

  it('concurrent sets of one key apply in call order, each seeing the previous', async () => {
    const { config, reload } = await loadFrom({ 'default.ini': '[s]\nk = start\n' });
    const previous = await Promise.all(Array.from({ length: 50 }, (_, i) => config.set('s', 'k', `v${i}`)));
    assert.deepEqual(previous, ['start', ...Array.from({ length: 49 }, (_, i) => `v${i}`)]);
    assert.equal((await reload()).get('s', 'k'), 'v49');
  });

  it('a failed write rejects without blocking the writes queued after it', async () => {
    const { config, path: at } = await loadFrom({});
    fs.mkdirSync(at('blocker'));
    const broken = await Config.load({ defaultsFile: at('default.ini'), files: [], writableFile: path.join(at('blocker'), 'x', 'local.ini') });
    const first = broken.set('s', 'k', '1');
    const second = broken.set('s', 'k', '2');
    await assert.rejects(first);
    await assert.rejects(second);
    // The same instance keeps working once the cause is gone.
    fs.mkdirSync(path.join(at('blocker'), 'x'));
    assert.equal(await broken.set('s', 'k', '3'), undefined);
    assert.equal(broken.get('s', 'k'), '3');
    assert.equal(config.get('s', 'k'), undefined);
  });

  it('persist: false changes the running value but not the file', async () => {
    const { config, path: at, reload } = await loadFrom({
      'default.ini': '[s]\nk = default\n',
      'local.ini': '[s]\nk = mine\nj = kept\n',
    });
    const changes: ConfigChange[] = [];
    config.onChange((change) => changes.push(change));
    assert.equal(await config.set('s', 'k', 'memory', { persist: false }), 'mine');
    assert.equal(await config.delete('s', 'j', { persist: false }), 'kept');
    assert.equal(config.get('s', 'k'), 'memory');
    assert.equal(config.get('s', 'j'), undefined);
    assert.deepEqual(changes, [
      { section: 's', key: 'k', value: 'memory', previous: 'mine', written: 'memory', remote: false },
      { section: 's', key: 'j', value: undefined, previous: 'kept', written: undefined, remote: false },
    ]);
    assert.equal(fs.readFileSync(at('local.ini'), 'utf8'), '[s]\nk = mine\nj = kept\n');
    // A later persisted write saves only its own key.
    await config.set('s', 'other', 'saved');
    const fresh = await reload();
    assert.deepEqual(fresh.section('s'), { j: 'kept', k: 'mine', other: 'saved' });
  });

  it('persist: false still refuses values the file could not hold', async () => {
    const { config } = await loadFrom({});
    await assert.rejects(config.set('s', 'k', 'a\nb', { persist: false }), CouchError);
    assert.equal(config.get('s', 'k'), undefined);
  });

  it('keeps the mode of an existing writable file', async (t) => {
    if (process.platform === 'win32') return t.skip('POSIX modes');
    const { config, path: at } = await loadFrom({ 'local.ini': '[s]\n' });
    // Group-writable, so that a umask applied to the replacement would show.
    fs.chmodSync(at('local.ini'), 0o660);
    await config.set('s', 'k', 'v');
    assert.equal(fs.statSync(at('local.ini')).mode & 0o777, 0o660);
  });

  it('writes through a symlinked writable file instead of replacing the link', async (t) => {
    if (process.platform === 'win32') return t.skip('symlinks need privileges');
    const { path: at } = files({ 'default.ini': '', 'real.ini': '[s]\nk = old\n' });
    fs.symlinkSync(at('real.ini'), at('local.ini'));
    const config = await Config.load({ defaultsFile: at('default.ini'), files: [], writableFile: at('local.ini') });
    await config.set('s', 'k', 'new');
    assert.equal(fs.lstatSync(at('local.ini')).isSymbolicLink(), true);
    assert.equal(fs.readFileSync(at('real.ini'), 'utf8'), '[s]\nk = new\n');
  });

  it('leaves no temporary files behind', async () => {
    const { config, path: at } = await loadFrom({});
    await Promise.all([config.set('s', 'a', '1'), config.set('s', 'b', '2')]);
    assert.deepEqual(fs.readdirSync(path.dirname(at('local.ini'))).sort(), ['default.ini', 'local.ini']);
  });
});

describe('Config change events', () => {
  it('a set reports the new and previous values after memory is updated', async () => {
    const { config } = await loadFrom({ 'default.ini': '[s]\nk = default\n' });
    const seen: Array<[ConfigChange, string | undefined]> = [];
    config.onChange((change) => seen.push([change, config.get(change.section, change.key)]));
    await config.set('s', 'k', 'one');
    await config.set('s', 'k', 'two');
    assert.deepEqual(seen, [
      [{ section: 's', key: 'k', value: 'one', previous: 'default', written: 'one', remote: false }, 'one'],
      [{ section: 's', key: 'k', value: 'two', previous: 'one', written: 'two', remote: false }, 'two'],
    ]);
  });

  it('a delete reports the value it falls back to', async () => {
    const { config } = await loadFrom({ 'default.ini': '[s]\nk = default\n', 'local.ini': '[s]\nk = mine\nj = x\n' });
    const seen: ConfigChange[] = [];
    config.onChange((change) => seen.push(change));
    await config.delete('s', 'k');
    await config.delete('s', 'j');
    assert.deepEqual(seen, [
      { section: 's', key: 'k', value: 'default', previous: 'mine', written: undefined, remote: false },
      { section: 's', key: 'j', value: undefined, previous: 'x', written: undefined, remote: false },
    ]);
  });

  it("another worker's change applies in memory only and is reported as remote", async () => {
    const { config, path: at } = await loadFrom({ 'default.ini': '[s]\nk = default\n', 'local.ini': '[s]\nj = x\n' });
    const seen: ConfigChange[] = [];
    config.onChange((change) => seen.push(change));
    config.applyRemote('s', 'k', 'theirs');
    config.applyRemote('s', 'j', undefined);
    config.applyRemote('s', 'never-set', undefined);
    assert.equal(config.get('s', 'k'), 'theirs');
    assert.equal(config.get('s', 'j'), undefined);
    assert.deepEqual(seen, [
      { section: 's', key: 'k', value: 'theirs', previous: 'default', written: 'theirs', remote: true },
      { section: 's', key: 'j', value: undefined, previous: 'x', written: undefined, remote: true },
    ]);
    assert.equal(fs.readFileSync(at('local.ini'), 'utf8'), '[s]\nj = x\n');
  });

  it('listeners run before the write resolves', async () => {
    const { config } = await loadFrom({});
    let called = false;
    config.onChange(() => {
      called = true;
    });
    const write = config.set('s', 'k', 'v');
    assert.equal(called, false);
    await write;
    assert.equal(called, true);
  });

  it('unsubscribing stops the events', async () => {
    const { config } = await loadFrom({});
    const seen: string[] = [];
    const stop = config.onChange((change) => seen.push(change.value ?? ''));
    await config.set('s', 'k', 'one');
    stop();
    await config.set('s', 'k', 'two');
    assert.deepEqual(seen, ['one']);
  });

  it('a throwing listener breaks neither the others nor the write, and its log leaves out values', async () => {
    const { config, reload } = await loadFrom({ 'local.ini': '[admins]\nadmin = old-secret-hash\n' });
    const seen: string[] = [];
    config.onChange(() => {
      throw new Error('listener bug');
    });
    config.onChange((change) => seen.push(change.key));
    const logged: unknown[][] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      assert.equal(await config.set('admins', 'admin', 'new-secret-hash'), 'old-secret-hash');
    } finally {
      console.error = original;
    }
    assert.deepEqual(seen, ['admin']);
    assert.equal(logged.length, 1);
    const text = logged[0].map((part) => (part instanceof Error ? part.message : String(part))).join(' ');
    assert.match(text, /\[admins\] admin/);
    assert.doesNotMatch(text, /secret-hash/);
    assert.equal((await reload()).get('admins', 'admin'), 'new-secret-hash');
  });
});

describe('Config.load errors', () => {
  async function loadError(options: { defaultsFile: string; files: string[]; writableFile: string }): Promise<ConfigLoadError> {
    try {
      await Config.load(options);
    } catch (error) {
      assert.ok(error instanceof ConfigLoadError, `expected ConfigLoadError, got ${String(error)}`);
      assert.equal(error.message.includes('\n'), false);
      return error;
    }
    assert.fail('Config.load did not throw');
  }

  it('a missing defaults file', async () => {
    const { path: at } = files({});
    const error = await loadError({ defaultsFile: at('default.ini'), files: [], writableFile: at('local.ini') });
    assert.equal(error.message, `cannot read config file ${at('default.ini')}: ENOENT: no such file or directory`);
  });

  it('a missing --config file', async () => {
    const { path: at } = files({ 'default.ini': '' });
    const error = await loadError({ defaultsFile: at('default.ini'), files: [at('nope.ini')], writableFile: at('local.ini') });
    assert.equal(error.message, `cannot read config file ${at('nope.ini')}: ENOENT: no such file or directory`);
  });

  it('a missing last --config file, even when it is the writable one', async () => {
    const { path: at } = files({ 'default.ini': '' });
    const error = await loadError({ defaultsFile: at('default.ini'), files: [at('nope.ini')], writableFile: at('nope.ini') });
    assert.match(error.message, /nope\.ini: ENOENT/);
  });

  it('a directory passed as a --config file', async () => {
    const { dir, path: at } = files({ 'default.ini': '' });
    const error = await loadError({ defaultsFile: at('default.ini'), files: [dir], writableFile: at('local.ini') });
    assert.equal(error.message, `cannot read config file ${dir}: EISDIR: illegal operation on a directory`);
  });

  it('a directory passed as the writable file', async () => {
    const { dir, path: at } = files({ 'default.ini': '' });
    const error = await loadError({ defaultsFile: at('default.ini'), files: [], writableFile: dir });
    assert.match(error.message, /EISDIR/);
  });
});
