import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import { toJson } from '../../db/database.js';
import { maintainedCount } from '../../db/list-counts.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { AccountInfo } from './account-types/index.js';
import type { AccountStatus, VerificationStatus } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    external_accounts: {
      id: string;
      platform_id: string;
      customer_id: string | null;
      currency: string;
      account_type: string;
      account_info: Json<AccountInfo>;
      identifier: string;
      platform_account_id: string | null;
      status: AccountStatus;
      beneficiary_verification_status: VerificationStatus | null;
      beneficiary_verified_data: Json<{ fullName?: string } | null>;
      default_uma_deposit_account: boolean;
      is_deleted: boolean;
      created_at: Date;
      updated_at: Date;
    };
  }
}

export interface ExternalAccountRow {
  id: string;
  platform_id: string;
  customer_id: string | null;
  currency: string;
  account_type: string;
  account_info: AccountInfo;
  identifier: string;
  platform_account_id: string | null;
  status: AccountStatus;
  beneficiary_verification_status: VerificationStatus | null;
  beneficiary_verified_data: { fullName?: string } | null;
  default_uma_deposit_account: boolean;
  is_deleted: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Which accounts a request may see: the platform's own, or its customers'. */
export type Owner = 'customer' | 'platform';

export async function insertAccount(ex: Executor, row: ExternalAccountRow): Promise<void> {
  await ex
    .insertInto('external_accounts')
    .values({ ...row, account_info: toJson(row.account_info), beneficiary_verified_data: toJson(row.beneficiary_verified_data) })
    .execute();
}

export async function findAccount(ex: Executor, platformId: string, id: string, owner?: Owner): Promise<ExternalAccountRow | undefined> {
  let query = ex
    .selectFrom('external_accounts')
    .selectAll()
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('is_deleted', '=', false);
  if (owner) query = query.where('customer_id', owner === 'customer' ? 'is not' : 'is', null);
  return query.executeTakeFirst();
}

/** True inside a statement while the account exists on the platform and is not deleted. */
export function liveCondition(platformId: string, id: string): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from external_accounts where id = ${id} and ${ofPlatform(platformId)} and not is_deleted)`;
}

export async function findDefaultUmaAccount(ex: Executor, platformId: string, customerId: string): Promise<ExternalAccountRow | undefined> {
  return ex
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('default_uma_deposit_account', '=', true)
    .where('is_deleted', '=', false)
    .executeTakeFirst();
}

export interface ListFilter {
  owner: Owner;
  currency?: string;
  customerId?: string;
  limit?: number;
  cursor?: string;
}

export async function listAccounts(ex: Executor, platformId: string, filter: ListFilter) {
  let base = ex.selectFrom('external_accounts').selectAll().where('platform_id', '=', platformId).where('is_deleted', '=', false);
  base = base.where('customer_id', filter.owner === 'customer' ? 'is not' : 'is', null);
  if (filter.customerId !== undefined) base = base.where('customer_id', '=', filter.customerId);
  if (filter.currency !== undefined) base = base.where('currency', '=', filter.currency);
  const list = filter.owner === 'platform' ? 'external-accounts:platform' : 'external-accounts:customers';
  const total = onlyPages(filter, ['owner']) ? maintainedCount(ex, platformId, list) : undefined;
  return keysetPage(base, { limit: filter.limit, cursor: filter.cursor, total });
}

export async function softDelete(ex: Executor, platformId: string, id: string, owner: Owner, at: Date): Promise<boolean> {
  const result = await ex
    .updateTable('external_accounts')
    .set({ is_deleted: true, default_uma_deposit_account: false, updated_at: at })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('is_deleted', '=', false)
    .where('customer_id', owner === 'customer' ? 'is not' : 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function softDeleteForCustomer(ex: Executor, platformId: string, customerId: string, at: Date): Promise<number> {
  const result = await ex
    .updateTable('external_accounts')
    .set({ is_deleted: true, default_uma_deposit_account: false, updated_at: at })
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('is_deleted', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Takes the default-deposit flag away from the customer's current default. The advisory lock
 * serializes concurrent "make this the default" requests for one customer, so the second waits
 * and moves the flag again instead of failing on the unique index.
 */
export async function clearDefaultUmaAccount(ex: Executor, customerId: string, at: Date): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`external_accounts_default:${customerId}`}, 0))`.execute(ex);
  await ex
    .updateTable('external_accounts')
    .set({ default_uma_deposit_account: false, updated_at: at })
    .where('customer_id', '=', customerId)
    .where('default_uma_deposit_account', '=', true)
    .where('is_deleted', '=', false)
    .execute();
}
