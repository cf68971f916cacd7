import { sql } from 'kysely';
import type { Database } from './database.js';

/** How often a PGlite database is checked for tables to vacuum. */
export const PGLITE_VACUUM_INTERVAL_MS = 10_000;

/**
 * Vacuums the tables that PostgreSQL's autovacuum would vacuum now, by its default thresholds
 * (dead rows past 50 + 20% of the table, or rows inserted since the last vacuum past 1,000 + 20%),
 * and returns their names. For PGlite, which runs no autovacuum: without it, the planner kept
 * estimating the sizes of the day the tables were created, and a sandbox slowed down with every
 * payment it made (docs/decisions.md, "PGlite vacuums itself"). PostgreSQL does this on its own.
 */
export async function vacuumWhereDue(database: Database): Promise<string[]> {
  const { rows } = await sql<{ schema: string; name: string }>`
    select s.schemaname as schema, s.relname as name
    from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
       or s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)
    order by s.relname`.execute(database.db);
  for (const { schema, name } of rows) await sql`vacuum ${sql.id(schema, name)}`.execute(database.db);
  return rows.map((row) => row.name);
}
