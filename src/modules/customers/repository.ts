import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { DB, Executor, Trx } from '../../db/database.js';
import { toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import { maintainedCount } from '../../db/list-counts.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { Address, BusinessInfo, CustomerListQuery, CustomerType, VerificationStatus } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

/** Type-specific fields, kept together in one jsonb column. */
export interface CustomerDetails {
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: Address;
  businessInfo?: BusinessInfo;
}

declare module '../../db/schema.js' {
  interface DB {
    customers: {
      id: string;
      platform_id: string;
      platform_customer_id: string;
      customer_type: CustomerType;
      uma_address: string;
      email: string | null;
      region: string | null;
      currencies: string[];
      kyc_status: VerificationStatus | null;
      kyb_status: VerificationStatus | null;
      details: Json<CustomerDetails>;
      is_deleted: boolean;
      created_at: Date;
      updated_at: Date;
    };
  }
}

/** A customers row as read (the details column parsed). */
export type CustomerRow = Selectable<DB['customers']>;

/** Names of the unique indexes whose violations become 409s. */
export const UNIQUE_PLATFORM_CUSTOMER_ID = 'customers_platform_customer_id';
export const UNIQUE_UMA_ADDRESS = 'customers_uma_address';

export async function insertCustomer(trx: Trx, row: CustomerRow): Promise<void> {
  await trx
    .insertInto('customers')
    .values({ ...row, details: toJson(row.details) })
    .execute();
}

/** True, inside a statement, while the customer exists, is not deleted and its verification is APPROVED. */
export function approvedCondition(platformId: string, id: string): Expression<SqlBool> {
  return sql<SqlBool>`exists (
    select 1 from customers
    where id = ${id} and ${ofPlatform(platformId)} and not is_deleted
      and (case when customer_type = 'INDIVIDUAL' then kyc_status else kyb_status end) = 'APPROVED')`;
}

export async function findCustomer(ex: Executor, platformId: string, id: string, lock = false): Promise<CustomerRow | undefined> {
  let query = ex.selectFrom('customers').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The non-deleted customer with this UMA address (case-insensitive) or platformCustomerId. */
/** How a customer that is not deleted may be found. */
export type ActiveCustomerKey = { id: string } | { umaAddress: string } | { platformCustomerId: string };

/**
 * With `share`, the row is share-locked until the caller's transaction ends: `markDeleted` then
 * waits for it, and a deletion that committed first leaves nothing to find (the condition is
 * checked again on the row as that deletion left it).
 */
export async function findActiveCustomerBy(
  ex: Executor,
  platformId: string,
  by: ActiveCustomerKey,
  share = false,
): Promise<CustomerRow | undefined> {
  let query = ex.selectFrom('customers').selectAll().where('platform_id', '=', platformId).where('is_deleted', '=', false);
  if ('umaAddress' in by) query = query.where(sql<boolean>`lower(uma_address) = lower(${by.umaAddress})`);
  else if ('id' in by) query = query.where('id', '=', by.id);
  else query = query.where('platform_customer_id', '=', by.platformCustomerId);
  if (share) query = query.forShare();
  return query.executeTakeFirst();
}

export type CustomerChanges = Partial<Pick<CustomerRow, 'uma_address' | 'email' | 'currencies' | 'kyc_status' | 'kyb_status' | 'details'>>;

export async function updateCustomer(trx: Trx, id: string, changes: CustomerChanges, now: Date): Promise<CustomerRow> {
  const { details, ...columns } = changes;
  return trx
    .updateTable('customers')
    .set({ ...columns, ...(details && { details: toJson(details) }), updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Marks a customer deleted; undefined when there is no such customer or it was deleted already. */
export async function markDeleted(trx: Trx, platformId: string, id: string, now: Date): Promise<CustomerRow | undefined> {
  return trx
    .updateTable('customers')
    .set({ is_deleted: true, updated_at: now })
    .where('id', '=', id)
    .where(ofPlatform(platformId))
    .where('is_deleted', '=', false)
    .returningAll()
    .executeTakeFirst();
}

export async function activeCustomerIds(ex: Executor, platformId: string): Promise<string[]> {
  const rows = await ex.selectFrom('customers').select('id').where('platform_id', '=', platformId).where('is_deleted', '=', false).execute();
  return rows.map((r) => r.id);
}

export async function listCustomers(ex: Executor, platformId: string, q: CustomerListQuery) {
  let base = ex.selectFrom('customers').selectAll().where('platform_id', '=', platformId);
  if (!q.isIncludingDeleted) base = base.where('is_deleted', '=', false);
  if (q.platformCustomerId !== undefined) base = base.where('platform_customer_id', '=', q.platformCustomerId);
  if (q.customerType !== undefined) base = base.where('customer_type', '=', q.customerType);
  if (q.region !== undefined) base = base.where('region', '=', q.region);
  if (q.currency !== undefined) base = base.where(sql<boolean>`${q.currency} = any(currencies)`);
  if (q.umaAddress !== undefined) base = base.where(sql<boolean>`lower(uma_address) = lower(${q.umaAddress})`);
  if (q.createdAfter) base = base.where('created_at', '>=', new Date(q.createdAfter));
  if (q.createdBefore) base = base.where('created_at', '<=', new Date(q.createdBefore));
  if (q.updatedAfter) base = base.where('updated_at', '>=', new Date(q.updatedAfter));
  if (q.updatedBefore) base = base.where('updated_at', '<=', new Date(q.updatedBefore));
  const counted = q.isIncludingDeleted ? (['customers:active', 'customers:deleted'] as const) : (['customers:active'] as const);
  const total = onlyPages(q, ['isIncludingDeleted']) ? maintainedCount(ex, platformId, ...counted) : undefined;
  return keysetPage(base, { limit: q.limit, cursor: q.cursor, total });
}
