/** Bodies reclaimed per transaction by `compact`. */
export const COMPACTION_SLICE = 500;

/** What one compaction slice reclaimed. */
export interface ReclaimedSlice {
  bodies: number;
  bytes: number;
}

/** Runs compaction slices until one reclaims less than a full slice; answers the bytes reclaimed. */
export async function compactInSlices(slice: () => Promise<ReclaimedSlice>): Promise<number> {
  let bytes = 0;
  for (;;) {
    const reclaimed = await slice();
    bytes += reclaimed.bytes;
    if (reclaimed.bodies < COMPACTION_SLICE) return bytes;
  }
}
