import { sql, type OperationNodeSource, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/** A plain INSERT, UPDATE or DELETE built with Kysely, as a query builder or `sql` (no WITH of its own). */
export type Write = OperationNodeSource;

/**
 * Runs writes as one statement, each in its own WITH clause: one round trip, and atomic even
 * outside a transaction, because PostgreSQL runs a single statement in a transaction of its own.
 * The writes share one snapshot, so none may rely on another's effect (constraints are checked
 * once all of them ran, so a row may still reference one inserted beside it). Every write runs
 * whether or not anything reads it, which is why only data-modifying statements may be passed: a
 * SELECT of a function would silently not run.
 */
export async function writeAsOne(ex: Executor, writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length === 1) {
    await sql`${writes[0]}`.execute(ex);
    return;
  }
  await sql`with ${clauses(writes)} select 1`.execute(ex);
}

/**
 * `query` with writes riding on it, as one statement that returns the rows of `query`. `query`
 * (a SELECT, such as one of a function that writes) runs once, as the CTE `name`, which the
 * writes may read; otherwise the rules of `writeAsOne` apply.
 */
export function withWrites<R>(name: string, query: RawBuilder<R>, writes: Write[]): RawBuilder<R> {
  if (writes.length === 0) return query;
  return sql<R>`with ${sql.id(name)} as (${query}), ${clauses(writes)} select * from ${sql.id(name)}`;
}

function clauses(writes: Write[]) {
  return sql.join(writes.map((write, i) => sql`${sql.id(`w${i}`)} as (${write})`));
}
