import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { SandboxSettings } from './sandbox.js';

/** The sandbox's settings, read from the configuration at each call (so `_config` changes apply). */
export function sandboxSettings(config: Config, log?: Logger): SandboxSettings {
  return {
    workers: () => Math.max(1, config.getInteger('divan', 'js_workers')),
    designDocsPerWorker: () => Math.max(1, config.getInteger('divan', 'js_design_docs_per_worker')),
    limits: () => ({
      timeoutMs: Math.max(1, config.getInteger('couchdb', 'os_process_timeout')),
      memoryBytes: Math.max(1024 * 1024, config.getInteger('quickjs', 'memory_limit_bytes')),
    }),
    ...(log ? { log } : {}),
  };
}
