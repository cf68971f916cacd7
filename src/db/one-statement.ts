import { sql, type OperationNodeSource, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/** A plain INSERT, UPDATE or DELETE built with Kysely, as a query builder or `sql` (no WITH of its own). */
export type Write = OperationNodeSource;

/**
 * A clause later clauses or the final query refer to by `as`. A data-modifying one always runs; a
 * SELECT only when something reads it, so the final query must read every named SELECT.
 */
export interface Named {
  as: string;
  query: OperationNodeSource;
}

export type Clause = Write | Named;

export const isNamed = (clause: Clause): clause is Named => typeof (clause as Named).as === 'string';

/**
 * Runs writes as one statement, each in its own WITH clause: one round trip, and atomic even
 * outside a transaction, because PostgreSQL runs a single statement in a transaction of its own.
 * The writes share one snapshot, so none may rely on another's effect (constraints are checked
 * once all of them ran, so a row may still reference one inserted beside it), except through a
 * named clause's RETURNING rows. Every write runs whether or not anything reads it, which is why
 * a plain SELECT (of a function, say) must be a named clause that `finish`, the final query
 * (`select 1` by default), reads. `finish` can also refuse the whole statement
 * (`corridor_expect`).
 */
export async function writeAsOne(ex: Executor, writes: Clause[], finish?: RawBuilder<unknown>): Promise<void> {
  if (writes.length === 0) {
    if (finish) await finish.execute(ex);
    return;
  }
  if (writes.length === 1 && !finish && !isNamed(writes[0])) {
    await sql`${writes[0]}`.execute(ex);
    return;
  }
  await statementOf(writes, finish ?? sql`select 1`).execute(ex);
}

/** The clauses (at least one) and the final query as one statement, to run or to read rows from. */
export function statementOf<R>(writes: Clause[], finish: RawBuilder<R>): RawBuilder<R> {
  return sql<R>`with ${clauses(writes)} ${finish}`;
}

function clauses(writes: Clause[]) {
  return sql.join(writes.map((write, i) => (isNamed(write) ? sql`${sql.id(write.as)} as (${write.query})` : sql`${sql.id(`w${i}`)} as (${write})`)));
}
