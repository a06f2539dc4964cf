/** Hits and misses of one cache, read by the metrics registry when it is scraped. */
export class HitCounts {
  hits = 0;
  misses = 0;

  record(hit: boolean): void {
    if (hit) this.hits++;
    else this.misses++;
  }
}
