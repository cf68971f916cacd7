/** Rows one pruning statement deletes at most: each batch is a short transaction of its own. */
export const PRUNE_BATCH = 5_000;

/**
 * Runs `deleteBatch` (which deletes at most `limit` rows and says how many it did) until a batch
 * comes back short; returns the total. Small batches keep locks, WAL bursts and PGlite's single
 * connection free for requests in between.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, limit = PRUNE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(limit);
    total += deleted;
    if (deleted < limit) return total;
  }
}
