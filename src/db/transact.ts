import type { Kysely } from 'kysely';
import type { DB, Trx } from './database.js';

type Flush = () => Promise<void>;
const beforeCommit = new WeakMap<Trx, Map<string, Flush>>();

/**
 * Runs `work` in a transaction that other modules can attach writes to, performed once just
 * before it commits (see `onBeforeCommit`): the outbox uses it to write all of a transaction's
 * events and jobs in one statement instead of one per call.
 */
export async function transact<T>(db: Kysely<DB>, work: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const flushes = new Map<string, Flush>();
    beforeCommit.set(trx, flushes);
    const result = await work(trx);
    for (const flush of flushes.values()) await flush();
    flushes.clear();
    return result;
  });
}

/**
 * Registers `flush` (once per key) to run right before `trx` commits. Returns false when `trx`
 * was not opened by `transact`, in which case the caller must write at once.
 */
export function onBeforeCommit(trx: Trx, key: string, flush: Flush): boolean {
  const flushes = beforeCommit.get(trx);
  if (!flushes) return false;
  if (!flushes.has(key)) flushes.set(key, flush);
  return true;
}
