import { JsSandbox } from '../../src/js/sandbox.js';
import type { Limits, Retention } from '../../src/js/protocol.js';

/** `native`: whether index functions of the native subset run on the host (true by default, as configured). */
export type SandboxOptions = Partial<Limits & Retention & { workers: number; native: boolean }>;

/** A sandbox with small test limits; `options` overrides any of them. */
export function testSandbox(options: SandboxOptions = {}): JsSandbox {
  return new JsSandbox({
    workers: () => options.workers ?? 1,
    retention: () => ({ maxContexts: options.maxContexts ?? 4, maxBytes: options.maxBytes ?? 1024 * 1024 * 1024, idleMs: options.idleMs ?? 60_000 }),
    limits: () => ({
      timeoutMs: options.timeoutMs ?? 2000,
      memoryBytes: options.memoryBytes ?? 32 * 1024 * 1024,
      maxEmits: options.maxEmits ?? 100_000,
      maxEmitBytes: options.maxEmitBytes ?? 8 * 1024 * 1024,
    }),
    native: () => options.native ?? true,
  });
}
