import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULT_INI } from '../../../src/app.js';
import { Config } from '../../../src/config/config.js';
import { StartupError } from '../../../src/errors/startup-error.js';
import { dropSchema, POSTGRES_SKIP_REASON, POSTGRES_TEST_URL, uniqueSchema } from '../../support/backends.js';
import { Logger } from '../../../src/log/logger.js';
import { STORAGE_BACKENDS } from '../../../src/wiring/storage-backends.js';
import { openStorage } from '../../../src/wiring/storage.js';

const dir = mkdtempSync(join(tmpdir(), 'divan-storage-selection-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function configWith(name: string, divan: string): Promise<Config> {
  const file = join(dir, `${name}.ini`);
  writeFileSync(file, `[divan]\n${divan}\n`);
  return Config.load({ defaultsFile: DEFAULT_INI, files: [file], writableFile: file });
}

describe('[divan] storage selects a backend from the registry', () => {
  test('every registered backend has its own name', () => {
    const names = STORAGE_BACKENDS.map((backend) => backend.name);
    assert.deepEqual([...new Set(names)], names);
    assert.deepEqual(names, ['sqlite', 'postgres']);
  });

  test('an unknown name is refused at start, naming the registered backends', async () => {
    const config = await configWith('unknown', 'storage = mongo');
    await assert.rejects(openStorage(config, dir, new Logger('error'), { env: {} }), (error: unknown) => {
      assert.ok(error instanceof StartupError);
      assert.equal(error.message, '[divan] storage must be sqlite or postgres, not "mongo"');
      return true;
    });
  });

  test('sqlite opens the file under the data directory, a store no other server shares', async () => {
    const config = await configWith('sqlite', 'storage = sqlite');
    const opened = await openStorage(config, dir, new Logger('error'), { env: {} });
    try {
      assert.equal(opened.backend.name, 'sqlite');
      assert.equal(opened.backend.capabilities.sharedByServers, false);
      assert.equal(opened.meetingPoint, undefined);
      assert.equal(opened.bus, undefined);
      assert.equal(await opened.storage.createDatabase('db', {}), true);
      assert.deepEqual(await opened.storage.listDatabases(), ['db']);
    } finally {
      await opened.storage.close();
    }
  });

  test('postgres without a URL is refused at start with what to set', async () => {
    const config = await configWith('postgres', 'storage = postgres');
    await assert.rejects(openStorage(config, dir, new Logger('error'), { env: {} }), (error: unknown) => {
      assert.ok(error instanceof StartupError);
      assert.equal(error.message, '[divan] storage = postgres needs [divan] postgres_url or DIVAN_POSTGRES_URL');
      return true;
    });
  });

  test('postgres opens the shared store with its meeting point and the cluster bus there', { skip: POSTGRES_SKIP_REASON }, async () => {
    const url = POSTGRES_TEST_URL!;
    const schema = uniqueSchema();
    const config = await configWith('postgres-shared', `storage = postgres\npostgres_schema = ${schema}`);
    const opened = await openStorage(config, dir, new Logger('error'), { env: { DIVAN_POSTGRES_URL: url } });
    try {
      assert.equal(opened.backend.name, 'postgres');
      assert.equal(opened.backend.capabilities.sharedByServers, true);
      assert.deepEqual(opened.meetingPoint, { url, schema });
      assert.ok(opened.bus !== undefined);
      assert.equal(await opened.storage.createDatabase('db', {}), true);
    } finally {
      await opened.bus?.close();
      await opened.storage.close();
      await dropSchema(url, schema);
    }
  });
});
