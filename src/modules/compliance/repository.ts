import type { Executor, Trx } from '../../db/database.js';
import { literalLimit, toJson } from '../../db/database.js';
import type { Json } from '../../db/schema.js';
import { maintainedCount } from '../../db/list-counts.js';
import { keysetPage, onlyPages } from '../../http/pagination.js';
import type { CustomerType, VerificationStatus } from '../customers/schemas.js';
import type { PersonalInfo, VerificationErrorView, VerificationListQuery, VerificationState } from './schemas.js';
import { ofPlatform } from '../../db/tenant.js';

declare module '../../db/schema.js' {
  interface DB {
    beneficial_owners: {
      id: string;
      platform_id: string;
      customer_id: string;
      roles: string[];
      ownership_percentage: number;
      personal_info: Json<PersonalInfo>;
      kyc_status: VerificationStatus;
      created_at: Date;
      updated_at: Date;
    };
    verifications: {
      id: string;
      platform_id: string;
      customer_id: string;
      status: VerificationState;
      errors: Json<VerificationErrorView[]>;
      customer_type: CustomerType;
      customer_status: VerificationStatus;
      resolution_note: string | null;
      created_at: Date;
      updated_at: Date;
    };
  }
}

export interface OwnerRow {
  id: string;
  platform_id: string;
  customer_id: string;
  roles: string[];
  ownership_percentage: number;
  personal_info: PersonalInfo;
  kyc_status: VerificationStatus;
  created_at: Date;
  updated_at: Date;
}

export interface VerificationRow {
  id: string;
  platform_id: string;
  customer_id: string;
  status: VerificationState;
  errors: VerificationErrorView[];
  customer_type: CustomerType;
  customer_status: VerificationStatus;
  resolution_note: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertOwner(trx: Trx, row: OwnerRow): Promise<void> {
  await trx.insertInto('beneficial_owners').values({ ...row, personal_info: toJson(row.personal_info) }).execute();
}

/**
 * Locks a business's row for a change to its owners, so that changes check the ownership total one
 * after another. The business first, then an owner: the order a deletion of the business takes.
 */
export async function lockBusiness(trx: Trx, platformId: string, customerId: string): Promise<void> {
  await trx.selectFrom('customers').select('id').where('id', '=', customerId).where(ofPlatform(platformId)).forNoKeyUpdate().executeTakeFirst();
}

export async function findOwner(ex: Executor, platformId: string, id: string, lock = false): Promise<OwnerRow | undefined> {
  let query = ex.selectFrom('beneficial_owners').selectAll().where('id', '=', id).where(ofPlatform(platformId));
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateOwner(trx: Trx, id: string, changes: Partial<Pick<OwnerRow, 'roles' | 'ownership_percentage' | 'personal_info' | 'kyc_status'>>, now: Date) {
  const { personal_info, ...columns } = changes;
  return trx
    .updateTable('beneficial_owners')
    .set({ ...columns, ...(personal_info && { personal_info: toJson(personal_info) }), updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every owner of a business customer, oldest first. */
export async function ownersOf(ex: Executor, platformId: string, customerId: string): Promise<OwnerRow[]> {
  return ownersOfAll(ex, platformId, [customerId]);
}

/** Every owner of these business customers (a page of them), oldest first. */
export async function ownersOfAll(ex: Executor, platformId: string, customerIds: readonly string[]): Promise<OwnerRow[]> {
  if (customerIds.length === 0) return [];
  return ex
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', 'in', customerIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listOwners(ex: Executor, platformId: string, customerId: string, page: { limit?: number; cursor?: string }) {
  const base = ex.selectFrom('beneficial_owners').selectAll().where('platform_id', '=', platformId).where('customer_id', '=', customerId);
  return keysetPage(base, page);
}

/** Owners still waiting for a manual decision become `status` (an operator resolved their business). */
export async function settlePendingOwners(trx: Trx, platformId: string, customerId: string, status: VerificationStatus, now: Date): Promise<void> {
  await trx
    .updateTable('beneficial_owners')
    .set({ kyc_status: status, updated_at: now })
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('kyc_status', '=', 'PENDING')
    .execute();
}

export async function insertVerification(trx: Trx, row: VerificationRow): Promise<void> {
  await trx.insertInto('verifications').values({ ...row, errors: toJson(row.errors) }).execute();
}

export async function findVerification(ex: Executor, platformId: string | null, id: string, lock = false): Promise<VerificationRow | undefined> {
  let query = ex.selectFrom('verifications').selectAll().where('id', '=', id);
  if (platformId) query = query.where('platform_id', '=', platformId);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * The customer's verification under review. A deleted customer's never is: nobody decides it any
 * more (`resolve` refuses it), so it must not hold the documents, which are to be deletable.
 */
export async function openVerificationOf(ex: Executor, platformId: string, customerId: string): Promise<VerificationRow | undefined> {
  return ex
    .selectFrom('verifications')
    .selectAll('verifications')
    .where('verifications.platform_id', '=', platformId)
    .where('verifications.customer_id', '=', customerId)
    .where('verifications.status', '=', 'PENDING_MANUAL_REVIEW')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('customers').select('customers.id').whereRef('customers.id', '=', 'verifications.customer_id').where('customers.is_deleted', '=', false)),
    )
    .executeTakeFirst();
}

export interface Decision {
  status: VerificationState;
  customerStatus: VerificationStatus;
  errors: VerificationErrorView[];
  note: string | null;
  now: Date;
}

export async function decideVerification(trx: Trx, id: string, decision: Decision) {
  return trx
    .updateTable('verifications')
    .set({
      status: decision.status,
      customer_status: decision.customerStatus,
      errors: toJson(decision.errors),
      resolution_note: decision.note,
      updated_at: decision.now,
    })
    .where('id', '=', id)
    .where('status', '=', 'PENDING_MANUAL_REVIEW')
    .returningAll()
    .executeTakeFirst();
}

/** Verifications in `status` of customers that are not deleted (nobody is left to decide on for the others). */
export async function verificationsInStatus(ex: Executor, platformId: string | undefined, status: VerificationState, limit: number): Promise<VerificationRow[]> {
  let query = ex
    .selectFrom('verifications')
    .selectAll()
    .where('status', '=', status)
    .where(({ exists, selectFrom }) => exists(selectFrom('customers as c').select('c.id').whereRef('c.id', '=', 'verifications.customer_id').where('c.is_deleted', '=', false)));
  if (platformId) query = query.where('platform_id', '=', platformId);
  return query.orderBy('created_at').orderBy('id').limit(literalLimit(limit)).execute();
}

export async function listVerifications(ex: Executor, platformId: string, q: VerificationListQuery) {
  let base = ex.selectFrom('verifications').selectAll().where('platform_id', '=', platformId);
  if (q.customerId !== undefined) base = base.where('customer_id', '=', q.customerId);
  if (q.verificationStatus !== undefined) base = base.where('status', '=', q.verificationStatus);
  const total = onlyPages(q) ? maintainedCount(ex, platformId, 'verifications') : undefined;
  return keysetPage(base, { limit: q.limit, cursor: q.cursor, total });
}
