/**
 * The design-document contexts one sandbox worker keeps loaded (worker side), least recently used
 * first. WebAssembly memory never shrinks, so memory comes back only by dropping a whole context:
 * one idle past `idleMs` is dropped, and so are the least recently used ones while the worker holds
 * more than `maxContexts` or more than `maxBytes` (its share of `[quickjs] max_total_memory_bytes`).
 */
import type { DesignContext } from './design-context.js';
import type { HeldMemory, Retention } from './protocol.js';

interface Entry {
  readonly context: DesignContext;
  /** The WebAssembly memory the context lives in: its size is what the context holds. */
  readonly memory: { readonly buffer: ArrayBuffer };
  used: number;
}

export class ContextCache {
  readonly #entries = new Map<string, Entry>();
  #evictions = 0;

  /** The live context of `key` (now the most recently used), or undefined. */
  take(key: string): DesignContext | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    entry.used = Date.now();
    this.#entries.set(key, entry);
    return entry.context;
  }

  /** Drops `key`'s context (broken, or replaced); not counted as an eviction. */
  drop(key: string): void {
    this.#entries.get(key)?.context.dispose();
    this.#entries.delete(key);
  }

  /** Makes room for a context of `incomingBytes` before it is created. */
  reserve(retention: Retention, incomingBytes: number): void {
    while (this.#entries.size > 0 && (this.#entries.size >= retention.maxContexts || this.bytes() + incomingBytes > retention.maxBytes)) this.#evictOldest();
  }

  add(key: string, context: DesignContext, memory: { readonly buffer: ArrayBuffer }): void {
    this.#entries.set(key, { context, memory, used: Date.now() });
  }

  /** Drops idle contexts, and the least recently used while over the bounds; true when any went. */
  trim(retention: Retention): boolean {
    const before = this.#evictions;
    const idleSince = Date.now() - retention.idleMs;
    for (const [, entry] of this.#entries) {
      if (entry.used > idleSince) break;
      this.#evictOldest();
    }
    while (this.#entries.size > 0 && (this.#entries.size > retention.maxContexts || this.bytes() > retention.maxBytes)) this.#evictOldest();
    return this.#evictions !== before;
  }

  bytes(): number {
    let total = 0;
    for (const entry of this.#entries.values()) total += entry.memory.buffer.byteLength;
    return total;
  }

  held(): HeldMemory {
    return { bytes: this.bytes(), contexts: this.#entries.size, evictions: this.#evictions };
  }

  #evictOldest(): void {
    const oldest = this.#entries.keys().next().value;
    if (oldest === undefined) return;
    this.drop(oldest);
    this.#evictions++;
  }
}
