import { sql } from 'kysely';
import { afterAll, expect, it, vi } from 'vitest';
import { startTestApp } from '../../test/support/app.js';
import { sharedTestDatabase } from '../../test/support/db.js';
import type { Database } from './database.js';
import { PGLITE_VACUUM_INTERVAL_MS, vacuumWhereDue } from './pglite-vacuum.js';

afterAll(async () => {
  const { db } = await sharedTestDatabase();
  await sql`drop table if exists vacuum_probe, vacuum_probe_workers`.execute(db);
});

/** Inserts `n` rows into `table` and sends the insert counters to the statistics at once. */
function insert(database: Database, table: string, n: number) {
  return database.db.connection().execute(async (c) => {
    await sql`insert into ${sql.id(table)} select g from generate_series(1, ${sql.lit(n)}) g`.execute(c);
    await sql`select pg_stat_force_next_flush()`.execute(c);
  });
}

it("vacuums a table once the rows inserted since its last vacuum pass autovacuum's threshold, and not again until they do", async () => {
  const database = await sharedTestDatabase();
  await sql`create table vacuum_probe (n int)`.execute(database.db);
  await insert(database, 'vacuum_probe', 900);
  expect(await vacuumWhereDue(database)).not.toContain('vacuum_probe');
  await insert(database, 'vacuum_probe', 200);
  expect(await vacuumWhereDue(database)).toContain('vacuum_probe');
  expect(await vacuumWhereDue(database)).not.toContain('vacuum_probe');
});

it('runs every 10 s with the workers on PGlite, and not on PostgreSQL, whose autovacuum does it', async () => {
  const t = await startTestApp();
  try {
    const { database } = t.corridor;
    await sql`create table vacuum_probe_workers (n int)`.execute(database.db);
    await insert(database, 'vacuum_probe_workers', 1_100);
    const lastVacuum = async () =>
      (await sql<{ at: Date | null }>`select last_vacuum as at from pg_stat_user_tables where relname = 'vacuum_probe_workers'`.execute(database.db)).rows[0]?.at ?? null;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let intervals: number;
    try {
      t.corridor.startWorkers();
      intervals = vi.getTimerCount(); // the maintenance interval, and the vacuum's on PGlite
      vi.advanceTimersByTime(PGLITE_VACUUM_INTERVAL_MS);
    } finally {
      vi.useRealTimers();
    }
    expect(intervals).toBe(database.kind === 'pglite' ? 2 : 1);
    if (database.kind === 'pglite') await expect.poll(lastVacuum, { timeout: 30_000 }).not.toBeNull();
  } finally {
    await t.close();
  }
});
