import type { Kysely, SelectQueryBuilder } from 'kysely';
import { literalLimit, type Executor } from './database.js';

/** Rows one pruning statement deletes at most: each batch is a short transaction of its own. */
const PRUNE_BATCH = 5_000;

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

/**
 * Deletes, in batches, the rows of `table` whose `key` the `pick` query selects, in the order it
 * gives (each batch takes the first `limit` of them): what every pruning statement does.
 */
export function deleteSelected(ex: Executor, table: string, key: string, pick: () => SelectQueryBuilder<any, any, any>, batch?: number): Promise<number> {
  return deleteInBatches(async (limit) => {
    const result = await (ex as Kysely<any>).deleteFrom(table).where(key, 'in', pick().limit(literalLimit(limit))).executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }, batch);
}
