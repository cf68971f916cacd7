import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import { maintainedCount } from '../../db/list-counts.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { InternalAccountType } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    internal_accounts: InternalAccountRow;
  }
}

export interface InternalAccountRow {
  id: string;
  platform_id: string;
  customer_id: string | null;
  type: InternalAccountType;
  currency: string;
  funding_reference: string;
  created_at: Date;
  updated_at: Date;
}

/** One INSERT for any number of accounts (columns travel as arrays, see the ledger's insert). */
export async function insertAccounts(trx: Trx, rows: InternalAccountRow[]): Promise<void> {
  if (rows.length === 0) return;
  const now = rows[0].created_at;
  await trx
    .insertInto('internal_accounts')
    .columns(['id', 'platform_id', 'customer_id', 'type', 'currency', 'funding_reference', 'created_at', 'updated_at'])
    .expression(
      sql`select t.id, t.platform_id, t.customer_id, t.type, t.currency, t.funding_reference, ${now}::timestamptz, ${now}::timestamptz
          from unnest(
            ${rows.map((r) => r.id)}::text[],
            ${rows.map((r) => r.platform_id)}::text[],
            ${rows.map((r) => r.customer_id)}::text[],
            ${rows.map((r) => r.type)}::text[],
            ${rows.map((r) => r.currency)}::text[],
            ${rows.map((r) => r.funding_reference)}::text[]
          ) as t(id, platform_id, customer_id, type, currency, funding_reference)`,
    )
    .execute();
}

export async function findAccounts(ex: Executor, platformId: string, ids: string[]): Promise<InternalAccountRow[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('internal_accounts').selectAll().where('id', 'in', ids).where(ofPlatform(platformId)).execute();
}

export async function findCustomerAccount(
  ex: Executor,
  platformId: string,
  customerId: string,
  currency: string,
): Promise<InternalAccountRow | undefined> {
  return ex
    .selectFrom('internal_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('currency', '=', currency)
    .where('type', 'in', ['INTERNAL_FIAT', 'INTERNAL_CRYPTO'])
    .executeTakeFirst();
}

/** Who already holds a Corridor-held account in these currencies: `customerId|currency` ('' for the platform). */
export async function holders(
  ex: Executor,
  platformId: string,
  currencies: string[],
  types: InternalAccountType[] = ['INTERNAL_FIAT', 'INTERNAL_CRYPTO'],
): Promise<Set<string>> {
  const rows = await ex
    .selectFrom('internal_accounts')
    .select(['customer_id', 'currency'])
    .where('platform_id', '=', platformId)
    .where('currency', 'in', currencies)
    .where('type', 'in', types)
    .execute();
  return new Set(rows.map((r) => `${r.customer_id ?? ''}|${r.currency}`));
}

/** Currencies of the platform's own accounts opened at or after `since`. */
export async function platformCurrenciesOpenedSince(ex: Executor, platformId: string, since: Date): Promise<string[]> {
  const rows = await ex
    .selectFrom('internal_accounts')
    .select('currency')
    .where('platform_id', '=', platformId)
    .where('customer_id', 'is', null)
    .where('created_at', '>=', since)
    .execute();
  return rows.map((r) => r.currency);
}

export interface AccountFilter {
  owner: 'customers' | 'platform';
  customerId?: string;
  currency?: string;
  type?: InternalAccountType;
  limit?: number;
  cursor?: string;
}

export async function listAccounts(ex: Executor, platformId: string, filter: AccountFilter) {
  let base = ex
    .selectFrom('internal_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', filter.owner === 'platform' ? 'is' : 'is not', null);
  if (filter.customerId !== undefined) base = base.where('customer_id', '=', filter.customerId);
  if (filter.currency !== undefined) base = base.where('currency', '=', filter.currency);
  if (filter.type !== undefined) base = base.where('type', '=', filter.type);
  const list = filter.owner === 'platform' ? 'internal-accounts:platform' : 'internal-accounts:customers';
  const total = onlyPages(filter, ['owner']) ? maintainedCount(ex, platformId, list) : undefined;
  return keysetPage(base, { limit: filter.limit, cursor: filter.cursor, total });
}
