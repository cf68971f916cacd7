import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestPlatform } from '../../test/support/app.js';
import { rowsRead } from '../../test/support/db.js';
import { expectStatus, startAppWithDocuments, uploadDocument, verifiedIndividual } from '../../test/support/verification.js';
import { listAccounts as listInternalAccounts } from '../modules/accounts/repository.js';
import { listDocuments } from '../modules/compliance/document-repository.js';
import { listVerifications } from '../modules/compliance/repository.js';
import { listAccounts as listExternalAccounts } from '../modules/external-accounts/repository.js';
import type { Executor, Trx } from './database.js';
import { maintainedCount, type ListName } from './list-counts.js';

// The lists of migration 0039: the route, and which rows of the table it shows.
const LISTS: { list: ListName; path: string; table: string; shows: string }[] = [
  { list: 'internal-accounts:customers', path: '/customers/internal-accounts', table: 'internal_accounts', shows: 'customer_id is not null' },
  { list: 'internal-accounts:platform', path: '/platform/internal-accounts', table: 'internal_accounts', shows: 'customer_id is null' },
  { list: 'external-accounts:customers', path: '/customers/external-accounts', table: 'external_accounts', shows: 'customer_id is not null and not is_deleted' },
  { list: 'external-accounts:platform', path: '/platform/external-accounts', table: 'external_accounts', shows: 'customer_id is null and not is_deleted' },
  { list: 'documents', path: '/documents', table: 'documents', shows: 'true' },
  { list: 'verifications', path: '/verifications', table: 'verifications', shows: 'true' },
];
const MIGRATION = new URL('./migrations/0039_more_list_counts.sql', import.meta.url);

let t: TestApp;
let p: TestPlatform;
let other: TestPlatform;

beforeAll(async () => {
  t = await startAppWithDocuments();
  p = await t.createPlatform({ regulated: false });
  other = await t.createPlatform({ regulated: false });
});
afterAll(() => t.close());

async function counted(ex: Executor, platformId: string, { table, shows }: (typeof LISTS)[number]): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where platform_id = ${platformId} and ${sql.raw(shows)}`.execute(ex);
  return rows[0].n;
}

async function maintained(ex: Executor, platformId: string, list: ListName): Promise<number> {
  return (await maintainedCount(ex, platformId, list).executeTakeFirstOrThrow()).n;
}

/** Every item of the unfiltered list, two per page, and the totalCount of each page. */
async function walk(platform: TestPlatform, path: string): Promise<{ items: number; totals: number[] }> {
  let items = 0;
  const totals: number[] = [];
  let cursor: string | undefined;
  do {
    const page = expectStatus(await platform.api.get(path, { limit: 2, cursor }), 200);
    items += page.data.length;
    totals.push(page.totalCount);
    cursor = page.nextCursor;
  } while (cursor);
  return { items, totals };
}

async function expectTotalsRight(platform: TestPlatform): Promise<void> {
  for (const list of LISTS) {
    const { items, totals } = await walk(platform, list.path);
    const want = { list: list.list, total: items, counted: items };
    expect({ list: list.list, total: totals[0], counted: await counted(t.corridor.database.db, platform.platform.id, list) }).toEqual(want);
    expect(new Set(totals)).toEqual(new Set([items]));
    expect(await maintained(t.corridor.database.db, platform.platform.id, list.list), list.list).toBe(items);
  }
}

class Rollback extends Error {}

/** Runs `body` in a transaction that is rolled back afterwards. */
async function rolledBack(body: (trx: Trx) => Promise<void>): Promise<void> {
  await t.corridor.database.db
    .transaction()
    .execute(async (trx) => {
      await body(trx);
      throw new Rollback();
    })
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
}

async function newCustomer(platform: TestPlatform, fullName: string): Promise<string> {
  return expectStatus(await platform.api.post('/customers', { customerType: 'INDIVIDUAL', fullName, region: 'US' }), 201).id;
}

let accountNumber = 20_000;
const bankAccount = (customerId?: string) => ({
  ...(customerId && { customerId }),
  currency: 'USD',
  accountInfo: {
    accountType: 'USD_ACCOUNT',
    accountNumber: `${++accountNumber}001`,
    routingNumber: '021000021',
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Maria Walker', birthDate: '1985-06-30', nationality: 'US' },
  },
});

describe('maintained totals of the platform lists (migration 0039)', () => {
  it('follow creates and deletes, and match what each list shows', async () => {
    // Rows of another platform must not count for this one.
    await newCustomer(other, 'Olga Other');
    expectStatus(await other.api.post('/customers/external-accounts', bankAccount()), 201);

    const alice = await verifiedIndividual(p, 'Alice Walker');
    const bob = await newCustomer(p, 'Bob Stone');
    const aliceAccounts = [];
    for (let i = 0; i < 3; i++) aliceAccounts.push(expectStatus(await p.api.post('/customers/external-accounts', bankAccount(alice.id)), 201));
    expectStatus(await p.api.post('/customers/external-accounts', bankAccount(bob)), 201);
    const own = expectStatus(await p.api.post('/platform/external-accounts', bankAccount()), 201);
    expectStatus(await p.api.post('/platform/external-accounts', bankAccount()), 201);
    const extra = await uploadDocument(p, bob);
    await uploadDocument(p, bob);
    expectStatus(await p.api.post('/verifications', { customerId: bob }), 200);
    await expectTotalsRight(p);

    expectStatus(await p.api.delete(`/customers/external-accounts/${aliceAccounts[0].id}`), 204);
    expectStatus(await p.api.delete(`/platform/external-accounts/${own.id}`), 204);
    expectStatus(await p.api.delete(`/documents/${extra.id}`), 204);
    // Deleting a customer deletes its external accounts; its internal accounts stay listed.
    expectStatus(await p.api.delete(`/customers/${bob}`), 200);
    await expectTotalsRight(p);
    await expectTotalsRight(other);
  });

  // A large platform's rows (a third of them the platform's own), written in bulk so the triggers
  // count each one, then soft or hard deletes of some.
  const BULK = 3000;
  const bulk: Record<string, (trx: Trx, platformId: string, customerId: string) => Promise<unknown>> = {
    internal_accounts: async (trx, platformId, customerId) => {
      await sql`insert into ledger_accounts (id, platform_id, currency, kind, created_at, updated_at)
        select 'BulkAccount:' || g, ${platformId}, 'X' || g, 'CUSTOMER', now(), now() from generate_series(1, ${BULK}) g`.execute(trx);
      await sql`insert into internal_accounts (id, platform_id, customer_id, type, currency, funding_reference, created_at, updated_at)
        select 'BulkAccount:' || g, ${platformId}, case when g % 3 = 0 then null else ${customerId} end, 'INTERNAL_FIAT', 'X' || g,
               'bulk-funding-' || g, now() - g * interval '1 second', now()
        from generate_series(1, ${BULK}) g`.execute(trx);
      await sql`delete from internal_accounts where id like 'BulkAccount:%' and right(id, 1) = '7'`.execute(trx);
    },
    external_accounts: async (trx, platformId, customerId) => {
      await sql`insert into external_accounts (id, platform_id, customer_id, currency, account_type, account_info, identifier, status, created_at, updated_at)
        select 'BulkExternal:' || g, ${platformId}, case when g % 3 = 0 then null else ${customerId} end, 'USD', 'USD_ACCOUNT', '{}',
               'bulk-' || g, 'ACTIVE', now() - g * interval '1 second', now()
        from generate_series(1, ${BULK}) g`.execute(trx);
      await sql`update external_accounts set is_deleted = true where id like 'BulkExternal:%' and right(id, 1) = '7'`.execute(trx);
      await sql`delete from external_accounts where id like 'BulkExternal:%' and right(id, 1) in ('7', '8')`.execute(trx);
    },
    documents: async (trx, platformId, customerId) => {
      await sql`insert into documents (id, platform_id, holder_id, customer_id, document_type, country, file_name, content_type, size_bytes, sha256, storage_key, created_at, updated_at)
        select 'BulkDocument:' || g, ${platformId}, ${customerId}, ${customerId}, 'PASSPORT', 'US', 'p.pdf', 'application/pdf', 1, '', 'k' || g,
               now() - g * interval '1 second', now()
        from generate_series(1, ${BULK}) g`.execute(trx);
      await sql`delete from documents where id like 'BulkDocument:%' and right(id, 1) = '7'`.execute(trx);
    },
    verifications: async (trx, platformId, customerId) => {
      await sql`insert into verifications (id, platform_id, customer_id, status, customer_type, customer_status, created_at, updated_at)
        select 'BulkVerification:' || g, ${platformId}, ${customerId}, 'APPROVED', 'INDIVIDUAL', 'APPROVED', now() - g * interval '1 second', now()
        from generate_series(1, ${BULK}) g`.execute(trx);
    },
  };
  const firstPage: Record<string, (trx: Trx, platformId: string) => Promise<{ totalCount: number; rows: unknown[] }>> = {
    'internal-accounts:customers': (trx, id) => listInternalAccounts(trx, id, { owner: 'customers', limit: 20 }),
    'internal-accounts:platform': (trx, id) => listInternalAccounts(trx, id, { owner: 'platform', limit: 20 }),
    'external-accounts:customers': (trx, id) => listExternalAccounts(trx, id, { owner: 'customer', limit: 20 }),
    'external-accounts:platform': (trx, id) => listExternalAccounts(trx, id, { owner: 'platform', limit: 20 }),
    documents: (trx, id) => listDocuments(trx, id, { limit: 20 }),
    verifications: (trx, id) => listVerifications(trx, id, { limit: 20 }),
  };

  it.each(LISTS.map((l) => [l.list, l] as const))('an unfiltered page of %s does not read the rows to count them', async (_, list) => {
    const customerId = await newCustomer(p, 'Bulk Holder');
    await rolledBack(async (trx) => {
      await bulk[list.table](trx, p.platform.id, customerId);
      await sql`analyze ${sql.table(list.table)}`.execute(trx);
      const before = await rowsRead(trx, list.table);
      const page = await firstPage[list.list](trx, p.platform.id);
      const read = (await rowsRead(trx, list.table)) - before;
      const total = await counted(trx, p.platform.id, list);
      expect(total).toBeGreaterThan(BULK / 4);
      expect(page.totalCount).toBe(total);
      expect(page.rows).toHaveLength(20);
      // The page's 21 rows, and the other owner's entries it passes on the way; counting would
      // read every one of the list's rows (a thousand or more).
      expect(read).toBeLessThan(200);
    });
  });

  it('an update writes a counter only when it moves a row out of its list', async () => {
    const customerId = await newCustomer(p, 'Edit Holder');
    const account = expectStatus(await p.api.post('/customers/external-accounts', bankAccount(customerId)), 201);
    const document = await uploadDocument(p, customerId);
    await rolledBack(async (trx) => {
      const counterWrites = async () => {
        const { rows } = await sql<{ n: string }>`
          select pg_stat_get_xact_tuples_inserted('list_counts'::regclass) + pg_stat_get_xact_tuples_updated('list_counts'::regclass) as n`.execute(trx);
        return Number(rows[0].n);
      };
      const before = await counterWrites();
      await sql`update external_accounts set status = 'INACTIVE', default_uma_deposit_account = true, updated_at = now() where id = ${account.id}`.execute(trx);
      await sql`update internal_accounts set updated_at = now() where customer_id = ${customerId}`.execute(trx);
      await sql`update documents set size_bytes = 2, file_name = 'b.pdf', updated_at = now() where id = ${document.id}`.execute(trx);
      await sql`update verifications set status = 'REJECTED', updated_at = now() where platform_id = ${p.platform.id}`.execute(trx);
      expect(await counterWrites()).toBe(before);
      await sql`update external_accounts set is_deleted = true where id = ${account.id}`.execute(trx);
      expect(await counterWrites()).toBe(before + 1);
      expect(await maintained(trx, p.platform.id, 'external-accounts:customers')).toBe(await counted(trx, p.platform.id, LISTS[2]));
    });
  });

  it("the migration's backfill counts the rows that were there before it", async () => {
    const statements = readFileSync(MIGRATION, 'utf8')
      .replace(/--.*$/gm, '')
      .split(';')
      .map((s) => s.trim());
    const backfill = statements.filter((s) => s.startsWith('insert into list_counts'));
    expect(backfill).toHaveLength(1);
    await expectTotalsRight(p);

    await rolledBack(async (trx) => {
      // As before 0039: no counters for these lists.
      await trx.deleteFrom('list_counts').where('list', 'in', LISTS.map((l) => l.list)).execute();
      for (const list of LISTS) expect(await maintained(trx, p.platform.id, list.list)).toBe(0);
      await sql.raw(backfill[0]).execute(trx);
      for (const platform of [p, other]) {
        for (const list of LISTS) {
          const total = await counted(trx, platform.platform.id, list);
          expect({ list: list.list, n: await maintained(trx, platform.platform.id, list.list) }).toEqual({ list: list.list, n: total });
        }
      }
      expect(await counted(trx, p.platform.id, LISTS[2])).toBeGreaterThan(0);
    });
  });
});
