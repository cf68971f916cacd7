import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { rowsRead, sharedTestDatabase } from '../../test/support/db.js';
import { listTransactions } from '../modules/transactions/repository.js';
import type { Database } from './database.js';

let database: Database;
beforeAll(async () => {
  database = await sharedTestDatabase();
});

// Migration 0038. A temporary copy of `transactions` (with its indexes) stands in for a large
// platform: 20,000 payments, the oldest 300 from one account and the oldest 5 for one customer.
// A page of either filter walked the platform's list newest first, filtering, until it reached
// them; each filter's own index now leads to them in order.
it('a filtered transaction list reads its own rows, however old they are', async () => {
  await database.db.transaction().execute(async (trx) => {
    await sql`create temp table transactions (like public.transactions including all) on commit drop`.execute(trx);
    await sql`insert into transactions (id, platform_id, type, status, source, destination, received_amount, received_currency, reference,
        created_at, updated_at, source_identifier, destination_identifier, platform_customer_id)
      select 'T' || g, 'P', 'OUTGOING', 'COMPLETED', '{}', '{}', 1, 'USD', 'R' || g, now() - g * interval '1 second', now(),
             case when g > 19700 then 'old-account' else 'account-' || (g % 500) end, 'payee-' || (g % 500),
             case when g > 19995 then 'old-customer' else 'customer-' || (g % 500) end
      from generate_series(1, 20000) g`.execute(trx);
    await sql`analyze transactions`.execute(trx);

    const cases = [
      { query: { platformCustomerId: 'old-customer' }, total: 5 },
      { query: { senderAccountIdentifier: 'old-account' }, total: 300 },
    ];
    for (const { query, total } of cases) {
      const before = await rowsRead(trx, 'transactions');
      const page = await listTransactions(trx, 'P', { limit: 20, ...query });
      expect(page.totalCount).toBe(total);
      expect(page.rows).toHaveLength(Math.min(total, 20));
      // The page (21 rows at most) and the count of the matching entries.
      expect((await rowsRead(trx, 'transactions')) - before).toBeLessThan(2 * total + 50);
    }
  });
});
