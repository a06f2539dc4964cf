import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { SandboxSettings } from './sandbox.js';

/** The sandbox's settings, read from the configuration at each call (so `_config` changes apply). */
export function sandboxSettings(config: Config, log?: Logger): SandboxSettings {
  const workers = (): number => Math.max(1, config.getInteger('divan', 'js_workers'));
  return {
    workers,
    retention: () => ({
      maxContexts: Math.max(1, config.getInteger('divan', 'js_design_docs_per_worker')),
      // The process's bound, shared evenly by its workers.
      maxBytes: Math.max(0, config.getInteger('quickjs', 'max_total_memory_bytes')) / workers(),
      idleMs: Math.max(0, config.getInteger('quickjs', 'idle_context_ms')),
    }),
    limits: () => ({
      timeoutMs: Math.max(1, config.getInteger('couchdb', 'os_process_timeout')),
      memoryBytes: Math.max(1024 * 1024, config.getInteger('quickjs', 'memory_limit_bytes')),
      maxEmits: Math.max(0, config.getInteger('query_server_config', 'max_emits_per_doc')),
      maxEmitBytes: Math.max(0, config.getInteger('query_server_config', 'max_emit_bytes_per_doc')),
    }),
    native: () => config.getBoolean('divan', 'native_functions'),
    ...(log ? { log } : {}),
  };
}
