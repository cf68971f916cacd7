import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from './database.js';
import { isNamed, statementOf, writeAsOne, type Clause } from './one-statement.js';

export interface WriteBatcherOptions {
  /** Statements of batched writes running at once; more writes wait and go in the next ones. */
  maxInFlight?: number;
  /** Most writes combined in one statement. */
  maxBatch?: number;
}

interface Entry {
  group: string;
  writes: Clause[];
  finish?: RawBuilder<unknown>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Commits the writes of concurrent requests together: while `maxInFlight` statements run, the
 * writes that arrive wait, and those of one group then go as one statement (each request's
 * clauses side by side, each `finish` as a column of the final select), so one round trip, one
 * commit and one WAL flush serve several requests. Under light load nothing waits and each
 * write is its own statement, exactly as `writeAsOne` would run it.
 *
 * The statement is atomic, so if it fails, no write of it happened; then each write runs again
 * on its own, and each request gets its own outcome. Only for writes that touch no row another
 * request's batched writes may touch (new rows, or rows only their own request holds, such as
 * its idempotency key): two updates of one row in one statement would leave only one of them.
 * A `finish` must return one row of one column (`select corridor_expect(…)`). Writes with named
 * clauses (their names could clash) run on their own.
 */
export function createWriteBatcher(db: Kysely<DB>, { maxInFlight = 4, maxBatch = 8 }: WriteBatcherOptions = {}) {
  const queue: Entry[] = [];
  let inFlight = 0;

  /** Takes the oldest waiting write and up to maxBatch - 1 more of its group, in arrival order. */
  function nextBatch(): Entry[] {
    const { group } = queue[0];
    const batch: Entry[] = [];
    for (let i = 0; i < queue.length && batch.length < maxBatch; ) {
      if (queue[i].group === group) batch.push(...queue.splice(i, 1));
      else i++;
    }
    return batch;
  }

  function pump(): void {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = nextBatch();
      inFlight++;
      void commit(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  async function alone(entry: Entry): Promise<void> {
    try {
      await writeAsOne(db, entry.writes, entry.finish);
      entry.resolve();
    } catch (error) {
      entry.reject(error);
    }
  }

  async function commit(batch: Entry[]): Promise<void> {
    if (batch.length === 1) return alone(batch[0]);
    const finishes = batch.map((entry) => sql`(${entry.finish ?? sql`select 1`})`);
    try {
      await statementOf(
        batch.flatMap((entry) => entry.writes),
        sql`select ${sql.join(finishes)}`,
      ).execute(db);
    } catch {
      await Promise.all(batch.map(alone));
      return;
    }
    for (const entry of batch) entry.resolve();
  }

  /**
   * Commits `writes` (and checks `finish`) in a statement shared with other writes of `group`
   * when others are waiting. Only writes with the same number of clauses and the same `finish`
   * text share a statement, so that the combined statements keep few shapes, each prepared once;
   * the clauses of a group's writes should not vary otherwise.
   */
  function write(group: string, writes: Clause[], finish?: RawBuilder<unknown>): Promise<void> {
    if (writes.length === 0 || writes.some(isNamed)) return writeAsOne(db, writes, finish);
    const shape = `${group}/${writes.length}/${finish ? finish.compile(db).sql : ''}`;
    return new Promise((resolve, reject) => {
      queue.push({ group: shape, writes, finish, resolve, reject });
      pump();
    });
  }

  return { write };
}
