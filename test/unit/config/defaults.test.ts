import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Config } from '../../../src/config/config.js';
import { DEFAULTS } from '../../../src/config/defaults.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const INI = readFileSync(join(ROOT, 'etc', 'default.ini'), 'utf8').split('\n');
/** Sections whose entries are the operator's own (names, keys), with no built-in defaults. */
const OPEN_SECTIONS = new Set(['admins', 'jwt_keys']);

interface IniEntry {
  section: string;
  key: string;
  /** undefined for a commented-out `;key = example` line. */
  value: string | undefined;
  commented: boolean;
  /** The line before is a `;` comment. */
  explained: boolean;
}

function iniEntries(): IniEntry[] {
  const entries: IniEntry[] = [];
  let section = '';
  INI.forEach((line, index) => {
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) section = header[1]!;
    const active = /^([a-z0-9_]+) = (.*)$/.exec(line);
    const commented = /^;([a-z0-9_]+) ?=/.exec(line);
    const match = active ?? commented;
    if (!match || !section) return;
    const explained = (INI[index - 1] ?? '').startsWith('; ');
    entries.push({ section, key: match[1]!, value: active ? active[2] : undefined, commented: !active, explained });
  });
  return entries;
}

const table = DEFAULTS as Record<string, Record<string, string | number | boolean>>;

describe('the typed defaults table and etc/default.ini', () => {
  test('every setting of the table is in etc/default.ini with the same default and a comment', () => {
    const entries = iniEntries();
    let checked = 0;
    for (const [section, keys] of Object.entries(table)) {
      for (const [key, value] of Object.entries(keys)) {
        const entry = entries.find((candidate) => candidate.section === section && candidate.key === key);
        assert.ok(entry, `[${section}] ${key} is not in etc/default.ini`);
        assert.ok(entry.explained, `[${section}] ${key} has no comment line above it in etc/default.ini`);
        if (value === '') assert.ok(entry.commented, `[${section}] ${key} has no default, so etc/default.ini shows it commented out`);
        else assert.equal(entry.value, String(value), `[${section}] ${key}`);
        checked++;
      }
    }
    assert.ok(checked >= 80, `only ${checked} settings checked`);
  });

  test('every setting etc/default.ini lists is in the table', () => {
    const missing = iniEntries()
      .filter((entry) => !OPEN_SECTIONS.has(entry.section))
      .filter((entry) => !Object.hasOwn(table, entry.section) || !Object.hasOwn(table[entry.section]!, entry.key))
      .map((entry) => `[${entry.section}] ${entry.key}`);
    assert.deepEqual(missing, []);
  });

  test('no call site in src/ carries its own default for a setting of the table (but one taken from the table)', () => {
    const calls: string[] = [];
    const visit = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) visit(path);
        else if (path.endsWith('.ts') && !path.endsWith(join('config', 'config.ts'))) {
          const text = readFileSync(path, 'utf8');
          for (const match of text.matchAll(/\.get(?:String|Integer|Boolean)\(\s*'([a-z0-9_]+)',\s*'([a-z0-9_]+)',(?!\s*DEFAULTS\.)/g)) calls.push(`${path}: [${match[1]}] ${match[2]}`);
          for (const match of text.matchAll(/\.auth(?:String|Integer|Boolean)\(\s*'([a-z0-9_]+)',(?!\s*DEFAULTS\.)/g)) calls.push(`${path}: [chttpd_auth] ${match[1]}`);
        }
      }
    };
    visit(join(ROOT, 'src'));
    const inTable = calls.filter((call) => {
      const [, section, key] = /\[([a-z0-9_]+)\] ([a-z0-9_]+)$/.exec(call)!;
      return Object.hasOwn(table, section!) && Object.hasOwn(table[section!]!, key!);
    });
    assert.deepEqual(inTable, []);
  });

  test('a setting no layer sets reads as the table default, typed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'divan-defaults-'));
    try {
      writeFileSync(join(dir, 'default.ini'), '');
      const config = await Config.load({ defaultsFile: join(dir, 'default.ini'), files: [], writableFile: join(dir, 'local.ini') });
      assert.equal(config.getInteger('chttpd', 'port'), 5984);
      assert.equal(config.getBoolean('chttpd', 'admin_only_all_dbs'), true);
      assert.equal(config.getString('divan', 'storage'), 'sqlite');
      assert.equal(config.authInteger('iterations'), 600000);
      assert.equal(config.authString('secret'), '');
      await config.set('chttpd', 'port', '6000');
      assert.equal(config.getInteger('chttpd', 'port'), 6000);
      assert.throws(() => (config.getString as (section: string, key: string) => string)('nowhere', 'nothing'), /no default/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
