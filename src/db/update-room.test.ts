import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sharedTestDatabase } from '../../test/support/db.js';

// Migrations 0023, 0026 and 0029: rows that are updated after they are written keep room on their
// page, so the updates can skip the indexes (HOT).
it('leaves room on each new page of jobs, quotes, transactions and ledger transfers for their updates', async () => {
  const { db } = await sharedTestDatabase();
  const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
    select relname, reloptions from pg_class
    where relname in ('jobs', 'quotes', 'transactions', 'ledger_transfers') and relkind = 'r' and relnamespace = current_schema()::regnamespace
    order by relname`.execute(db);
  expect(rows).toEqual([
    { relname: 'jobs', reloptions: ['fillfactor=70'] },
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

// Migration 0028: every index of the tables each payment writes is one a query reads, because each
// costs an entry on every insert (and on every update that is not HOT). A new index belongs here
// with the query that needs it.
it('indexes events, quotes and transactions only for the queries that read them', async () => {
  const { db } = await sharedTestDatabase();
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid in (select oid from pg_class where relname in ('events', 'quotes', 'transactions') and relnamespace = current_schema()::regnamespace)
    order by 1`.execute(db);
  expect(rows.map((r) => r.name)).toEqual([
    'events_failed', // /metrics (0038)
    'events_pending',
    'events_pkey',
    'quotes_expiring',
    'quotes_funding_reference',
    'quotes_lookup', // pruning lookups no quote names (0040); only quotes made from a lookup have an entry
    'quotes_pkey',
    'transactions_agent',
    'transactions_customer',
    'transactions_destination_page', // GET /transactions?receiverAccountIdentifier (0038)
    'transactions_page',
    'transactions_pkey',
    'transactions_platform_customer', // ?platformCustomerId (0038)
    'transactions_reference',
    'transactions_source_page', // ?senderAccountIdentifier (0038)
  ]);
});
