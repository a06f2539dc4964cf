/**
 * Bounds for "the server kept answering" assertions that hold however busy the machine is (security
 * issue 32 item 16: `npm test` must not fail on a loaded laptop). A bound is the larger of a fixed
 * floor, well above what scheduling on a busy machine adds, and a multiple of the same work measured
 * without the load under test, in the same test (a slow machine slows both alike). A server that
 * stops answering (a blocked event loop, a starved accept queue) misses it by far more than that.
 * Exact latency figures belong to the benchmarks and `npm run soak`, run on a quiet machine.
 */
export function latencyBound(idleMs: number, floorMs: number, ratio = 20): number {
  return Math.max(floorMs, ratio * idleMs);
}

/** The slowest of `count` runs of `work`, one after another: the idle reference of `latencyBound`. */
export async function slowestOf(work: () => Promise<unknown>, count = 10): Promise<number> {
  let slowest = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await work();
    slowest = Math.max(slowest, performance.now() - started);
  }
  return slowest;
}
