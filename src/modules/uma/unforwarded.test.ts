import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { sharedTestDatabase } from '../../../test/support/db.js';
import type { Database, Trx } from '../../db/database.js';
import { unforwardedOf } from './repository.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

/** Rows of uma_invoices read so far in this transaction: by sequential scans, and index entries read. */
async function rowsRead(trx: Trx): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select pg_stat_get_xact_tuples_returned('uma_invoices'::regclass)
         + (select coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) from pg_index where indrelid = 'uma_invoices'::regclass) as n`.execute(trx);
  return Number(rows[0].n);
}

async function addInvoices(trx: Trx, prefix: string, customer: string, count: number, forwarded: boolean): Promise<void> {
  await sql`insert into uma_invoices (payment_hash, platform_id, invoice, customer_id, account_id, deposit_account_id, sender_identifier,
      sender_domain, receiver_identifier, currency, amount, amount_msats, preimage, status, transaction_id, forward_transaction_id, expires_at, created_at, updated_at)
    select ${prefix} || g, 'P', 'lnbc', ${customer}, 'A', 'D', '$s', 'x.test', '$r', 'USD', 100, 1000, 'p', 'ACCEPTED', 'T' || g,
      ${forwarded ? sql`'F' || g` : sql`null`}, now(), now(), now()
    from generate_series(1, ${count}) g`.execute(trx);
}

// Migration 0037: a verification becoming APPROVED looks up that customer's held-back forwards
// (uma.resumeForwards); without an index of its own that read all of the platform's invoices.
it("finds a customer's unforwarded UMA deposits without reading the platform's other invoices", async () => {
  await database.db.transaction().execute(async (trx) => {
    // A temporary copy (indexes included) stands in for a platform with many invoices.
    await sql`create temp table uma_invoices (like public.uma_invoices including all) on commit drop`.execute(trx);
    await addInvoices(trx, 'forwarded-', 'Customer:other', 20_000, true);
    await addInvoices(trx, 'held-', 'Customer:other', 50, false);
    await addInvoices(trx, 'mine-', 'Customer:mine', 3, false);
    await sql`analyze uma_invoices`.execute(trx);
    const before = await rowsRead(trx);

    const held = await unforwardedOf(trx, 'P', 'Customer:mine');

    expect(held.sort()).toEqual(['mine-1', 'mine-2', 'mine-3']);
    expect((await rowsRead(trx)) - before).toBeLessThan(20);
  });
});
