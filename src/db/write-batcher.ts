import { sql, type RawBuilder } from 'kysely';
import { isNamed, statementOf, writeAsOne, type Clause } from './one-statement.js';
import type { Database } from './database.js';

export interface WriteBatcherOptions {
  /** Batches running at once, per way of batching; more writes wait and go in the next ones. */
  maxInFlight?: number;
  /** Most writes in one batch. */
  maxBatch?: number;
}

/**
 * Rows a write locks for update, by key: a batch that shares a transaction locks the rows of all
 * its writes first, in key order, with `statement` (the same for every write of a kind), so that
 * two batches, or a batch and anything else that locks several of these rows in key order,
 * cannot deadlock over them (see `giveWay` for the rows its writes lock afterwards).
 */
export interface RowLocks {
  keys: string[];
  statement: (keys: string[]) => RawBuilder<unknown>;
}

/** Which concurrent writes may be committed together: those of one kind. */
export interface Batching {
  kind: string;
  /** For writes that lock rows other writes of their kind may lock too (see `RowLocks`). */
  locks?: RowLocks;
}

/**
 * Set after a batch's locks: its writes then wait at most 100 ms for any other row lock. The batch
 * locks its rows before its writes lock theirs (a quote to claim, say), where a lone write takes
 * them in the other order, so another transaction may hold such a row while it waits for the
 * batch's. The batch then fails first, well before PostgreSQL's deadlock check (after 1 s by
 * default) could pick the other transaction to fail; nothing of it is kept, and its writes run
 * again alone.
 */
const giveWay = sql`set local lock_timeout = '100ms'`;

interface Entry {
  group: string;
  writes: Clause[];
  finish?: RawBuilder<unknown>;
  locks?: RowLocks;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A queue that commits waiting entries in batches: while `maxInFlight` batches run, entries that
 * arrive wait, and those of one group then go together (up to `maxBatch`, in arrival order).
 * Under light load nothing waits and each batch is one entry.
 */
function batchQueue(commit: (batch: Entry[]) => Promise<void>, { maxInFlight = 2, maxBatch = 16 }: WriteBatcherOptions) {
  const queue: Entry[] = [];
  let inFlight = 0;

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

  return (entry: Omit<Entry, 'resolve' | 'reject'>) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ ...entry, resolve, reject });
      pump();
    });
}

/**
 * Commits the writes of concurrent requests together, so that one round trip and one commit
 * (one WAL flush) serve several requests. Two ways, by what the writes are:
 *
 * - Writes of new rows only (or of rows only their own request holds, such as its idempotency
 *   key), without named clauses or locks, share one statement: each request's clauses side by
 *   side, each `finish` a column of the final select. Only writes with the same number of
 *   clauses and the same `finish` text share one, so that the combined statements keep few
 *   shapes, each prepared once. Two updates of one row in one statement would leave only one.
 * - Other writes (named clauses, whose names could clash; rows others may update) share a
 *   transaction instead: each request's statement as it would run alone, in order, after the
 *   batch's row locks (`RowLocks`), sent together (`Database.runInOneTransaction`).
 *
 * A batch is atomic: if it fails, nothing of it was kept; then each write runs again on its own,
 * and each request gets its own outcome. A `finish` must return one row of one column
 * (`select corridor_expect(…)`). Batches run on the database's batch connections, which keep one
 * plan per statement (`Database.runBatchedStatement`): what is batched must insert rows and find
 * the rows it checks or updates by key.
 */
export function createWriteBatcher(database: Database, options: WriteBatcherOptions = {}) {
  const { db } = database;

  async function alone(entry: Entry): Promise<void> {
    try {
      await database.runBatchedStatement(statementOf(entry.writes, entry.finish ?? sql`select 1`).compile(db));
      entry.resolve();
    } catch (error) {
      entry.reject(error);
    }
  }

  /** Runs `together`; if it fails, each entry alone. */
  async function commitOrSplit(batch: Entry[], together: () => Promise<unknown>): Promise<void> {
    if (batch.length === 1) return alone(batch[0]);
    try {
      await together();
    } catch {
      await Promise.all(batch.map(alone));
      return;
    }
    for (const entry of batch) entry.resolve();
  }

  const inOneStatement = batchQueue(
    (batch) =>
      commitOrSplit(batch, () => {
        const finishes = batch.map((entry) => sql`(${entry.finish ?? sql`select 1`})`);
        return database.runBatchedStatement(statementOf(batch.flatMap((entry) => entry.writes), sql`select ${sql.join(finishes)}`).compile(db));
      }),
    options,
  );

  const inOneTransaction = batchQueue(
    (batch) =>
      commitOrSplit(batch, () => {
        const locks = batch.find((entry) => entry.locks)?.locks;
        const keys = [...new Set(batch.flatMap((entry) => entry.locks?.keys ?? []))];
        const statements = batch.map((entry) => statementOf(entry.writes, entry.finish ?? sql`select 1`));
        if (locks && keys.length > 0) statements.unshift(locks.statement(keys), giveWay);
        return database.runInOneTransaction(statements.map((statement) => statement.compile(db)));
      }),
    options,
  );

  /**
   * Commits `writes` (and checks `finish`), together with concurrent writes of the same kind
   * when some are waiting.
   */
  function write(batching: Batching, writes: Clause[], finish?: RawBuilder<unknown>): Promise<void> {
    if (writes.length === 0) return writeAsOne(db, writes, finish);
    if (batching.locks || writes.some(isNamed)) return inOneTransaction({ group: batching.kind, writes, finish, locks: batching.locks });
    const group = `${batching.kind}/${writes.length}/${finish ? finish.compile(db).sql : ''}`;
    return inOneStatement({ group, writes, finish });
  }

  return { write };
}

export type WriteBatcher = ReturnType<typeof createWriteBatcher>;
