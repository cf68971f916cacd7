import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';

// Migration 0023: rows that are updated after they are written keep room on their page, so the
// updates can skip the indexes (HOT).
it('leaves a quarter of each new page of quotes and transactions free for their updates', async () => {
  const { db } = await sharedTestDatabase();
  const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
    select relname, reloptions from pg_class
    where relname in ('quotes', 'transactions') and relkind = 'r' and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  expect(rows).toEqual([
    { relname: 'quotes', reloptions: ['fillfactor=75'] },
    { relname: 'transactions', reloptions: ['fillfactor=75'] },
  ]);
});
