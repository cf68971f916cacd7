import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { rowsRead, sharedTestDatabase } from '../../test/support/db.js';
import type { Database, Trx } from './database.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

async function holdAndPost(trx: Trx, i: number): Promise<void> {
  await sql`select ledger_record('P', ${`T${i}`}, now(), array[${`L${i}`}], array['A'], array['S'], array[1::bigint], array[true], array['X'])`.execute(trx);
  await sql`select ledger_resolve('P', array[${`L${i}`}], null, true, now())`.execute(trx);
}

// Migrations 0027 and 0030. PL/pgSQL keeps a plan per statement for the life of a connection;
// made while the ledger was a page or two, that plan reads the whole table (a sequential scan, or
// every entry of the primary key for a merge join), and keeps reading it when the table has grown
// to millions of rows (seen in bench runs: ledger_resolve read every transfer three times per
// call; ledger_record's balance update and ledger_resolve's lock read every account). Temporary
// copies of the two tables stand in for a new ledger here.
it('the ledger functions read only the rows they touch, even with plans made while the ledger was small', async () => {
  await database.db.transaction().execute(async (trx) => {
    await sql`create temp table ledger_accounts (like public.ledger_accounts including all) on commit drop`.execute(trx);
    await sql`create temp table ledger_transfers (like public.ledger_transfers including all) on commit drop`.execute(trx);
    await sql`insert into ledger_accounts (id, platform_id, currency, kind, no_balance_check, posted_credits, created_at, updated_at)
      values ('A', 'P', 'USD', 'CUSTOMER', false, 1000000, now(), now()), ('S', 'P', 'USD', 'SYSTEM', true, 0, now(), now())`.execute(trx);
    await sql`analyze ledger_accounts, ledger_transfers`.execute(trx);
    for (let i = 0; i < 8; i++) await holdAndPost(trx, i);

    await sql`insert into ledger_accounts (id, platform_id, currency, kind, no_balance_check, created_at, updated_at)
      select 'C' || g, 'P', 'USD', 'CUSTOMER', false, now(), now() from generate_series(1, 20000) g`.execute(trx);
    await sql`insert into ledger_transfers (id, platform_id, debit_account_id, credit_account_id, amount, currency, state, code, created_at, resolved_at)
      select 'G' || g, 'P', 'S', 'A', 1, 'USD', 'POSTED', 'X', now(), now() from generate_series(1, 20000) g`.execute(trx);
    const before = { transfers: await rowsRead(trx, 'ledger_transfers'), accounts: await rowsRead(trx, 'ledger_accounts') };
    for (let i = 8; i < 11; i++) await holdAndPost(trx, i);

    // Each hold and post touches one transfer and two accounts, a few times over.
    expect((await rowsRead(trx, 'ledger_transfers')) - before.transfers).toBeLessThan(50);
    expect((await rowsRead(trx, 'ledger_accounts')) - before.accounts).toBeLessThan(100);
    const { rows } = await sql<{ state: string; n: number }>`select state, count(*)::int as n from ledger_transfers where id like 'L%' group by state`.execute(trx);
    expect(rows).toEqual([{ state: 'POSTED', n: 11 }]);
  });
});
