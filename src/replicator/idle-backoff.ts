/**
 * The wait between `_changes` pages of a continuous job that bring nothing new (issue 32 item 6).
 * A remote that honours the long poll answers an empty page after tens of seconds; one that answers
 * at once (or repeats the same position) would otherwise be asked again at once, thousands of times
 * a second. Such pages are followed by a wait that starts at `[replicator] idle_backoff` and doubles
 * up to `max_idle_backoff`; a page with progress, or one that took half the long poll, resets it.
 */
export class IdleBackoff {
  readonly #first: number;
  readonly #max: number;
  #next: number;

  constructor(firstMs: number, maxMs: number) {
    this.#first = Math.max(0, firstMs);
    this.#max = Math.max(this.#first, maxMs);
    this.#next = this.#first;
  }

  /** How long to wait before asking for the next page, after one that `progressed` (or not) in `elapsedMs`. */
  after(progressed: boolean, elapsedMs: number, longPollMs: number): number {
    if (progressed || elapsedMs >= longPollMs / 2) {
      this.#next = this.#first;
      return 0;
    }
    const wait = this.#next;
    this.#next = Math.min(this.#max, Math.max(1, this.#next * 2));
    return wait;
  }
}
