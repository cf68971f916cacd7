import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';

// Migrations 0023 and 0026: rows that are updated after they are written keep room on their page,
// so the updates can skip the indexes (HOT).
it('leaves room on each new page of quotes, transactions and ledger transfers for their updates', async () => {
  const { db } = await sharedTestDatabase();
  const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
    select relname, reloptions from pg_class
    where relname in ('quotes', 'transactions', 'ledger_transfers') and relkind = 'r' and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  expect(rows).toEqual([
    { relname: 'ledger_transfers', reloptions: ['fillfactor=80'] },
    { relname: 'quotes', reloptions: ['fillfactor=75'] },
    { relname: 'transactions', reloptions: ['fillfactor=75'] },
  ]);
});

it('indexes no column of ledger_transfers that resolving a hold changes', async () => {
  const { db } = await sharedTestDatabase();
  const { rows } = await sql<{ definition: string }>`
    select pg_get_indexdef(indexrelid) as definition from pg_index
    where indrelid = (select oid from pg_class where relname = 'ledger_transfers' and relnamespace = current_schema()::regnamespace)`.execute(db);
  expect(rows.length).toBeGreaterThan(0);
  for (const { definition } of rows) expect(definition).not.toMatch(/\bstate\b|\bresolved_at\b/);
});
