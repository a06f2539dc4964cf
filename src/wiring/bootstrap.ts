/**
 * What must happen once per server start, before any request: the data directory checked, the
 * configuration loaded, admins hashed (or one generated), the node uuid.
 */
import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { uuids } from '../crypto/uuids.js';
import { Config } from '../config/config.js';
import { randomHex } from '../crypto/crypto.js';
import { StartupError } from '../errors/startup-error.js';
import type { Logger } from '../log/logger.js';
import { applyEnvironment, ensureAnAdmin } from '../users/admin-bootstrap.js';
import { Admins } from '../users/admins.js';
import { followPbkdf2QueueSettings } from '../users/hash-cost.js';

/** Where the configuration comes from. */
export interface ConfigSources {
  /** `--config` files in order; the last one is the writable layer when given. */
  configFiles?: readonly string[];
  defaultsFile: string;
  /** `COUCHDB_USER`, `COUCHDB_PASSWORD`, `COUCHDB_SECRET`. */
  env?: Readonly<Record<string, string | undefined>>;
}

interface Bootstrapped {
  config: Config;
  admins: Admins;
  generatedAdminPassword?: string;
}

export function ensureWritableDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    throw new StartupError(`data directory ${dir} is not writable: ${(error as Error).message}`);
  }
}

/**
 * The once-per-start steps. With `[divan] workers` the primary process runs them (and
 * `prepareWorkers`) before forking, so each worker finds them done.
 */
export async function bootstrap(sources: ConfigSources, dataDir: string, log: Logger): Promise<Bootstrapped> {
  const config = await loadConfig(sources, dataDir, log);
  followPbkdf2QueueSettings(config);
  const admins = new Admins(config, log);
  await applyEnvironment(config, admins, sources.env ?? {});
  await admins.hashAll();
  const generatedAdminPassword = await ensureAnAdmin(config, admins);
  if (config.get('couchdb', 'uuid') === undefined) await config.set('couchdb', 'uuid', randomHex());
  return { config, admins, generatedAdminPassword };
}

/** The configuration layers, and `[log] level` followed as it changes. */
export async function loadConfig(sources: ConfigSources, dataDir: string, log: Logger): Promise<Config> {
  const files = (sources.configFiles ?? []).map((file) => resolve(file));
  const config = await Config.load({
    defaultsFile: sources.defaultsFile,
    files,
    writableFile: files.length > 0 ? files[files.length - 1]! : join(dataDir, 'local.ini'),
    // Shown where CouchDB shows it (tools read it to find the data): Divan's data lives in --data-dir.
    runtime: { couchdb: { database_dir: dataDir } },
  });
  log.setLevel(config.getString('log', 'level'));
  const configureUuids = (): void => {
    const algorithm = config.getString('uuids', 'algorithm');
    if (!uuids.configure(algorithm, config.getString('uuids', 'utc_id_suffix'))) log.warning(`[uuids] algorithm ${algorithm} is unknown: sequential is used`);
  };
  configureUuids();
  config.onChange((change) => {
    if (change.section === 'log' && change.key === 'level') log.setLevel(config.getString('log', 'level'));
    if (change.section === 'uuids') configureUuids();
  });
  return config;
}
