import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { rememberedRows, type RowChecks } from '../../core/row-checks.js';
import { newId } from '../../core/ids.js';
import { isUniqueViolation, type Database, type Executor, type Trx } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import type { AccountService } from '../accounts/service.js';
import type { BeneficialOwnerView } from '../compliance/schemas.js';
import type { Platform } from '../platform/service.js';
import * as repo from './repository.js';
import type { CustomerDetails, CustomerRow } from './repository.js';
import { checkCurrencies, checkCustomerFields, checkUmaAddress } from './rules.js';
import type { Address, BusinessInfo, CustomerCreate, CustomerListQuery, CustomerType, CustomerUpdate, CustomerView, VerificationStatus } from './schemas.js';

export interface CustomerServiceDeps {
  database: Database;
  clock: Clock;
  accounts: Pick<AccountService, 'openForCustomer'>;
}

/** A customer as other modules see it. */
export interface Customer {
  id: string;
  platformId: string;
  platformCustomerId: string;
  customerType: CustomerType;
  umaAddress: string;
  email: string | null;
  region: string | null;
  currencies: string[];
  /** Individuals: identity verification; businesses: business verification. */
  verificationStatus: VerificationStatus;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: Address;
  businessInfo?: BusinessInfo;
  isDeleted: boolean;
  createdAt: Date;
  updatedAt: Date;
}

function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    platformId: row.platform_id,
    platformCustomerId: row.platform_customer_id,
    customerType: row.customer_type,
    umaAddress: row.uma_address,
    email: row.email,
    region: row.region,
    currencies: row.currencies,
    verificationStatus: (row.customer_type === 'INDIVIDUAL' ? row.kyc_status : row.kyb_status) ?? 'UNVERIFIED',
    ...row.details,
    isDeleted: row.is_deleted,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Drops fields whose value is undefined, so a spread of it never erases a known value. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The API view. Unknown fields stay undefined: serializers leave them out of the JSON. A business
 * carries its beneficial owners (`owners`; none yet when left out).
 */
function present(c: Customer, owners: BeneficialOwnerView[] = []): CustomerView {
  const common = {
    id: c.id,
    platformCustomerId: c.platformCustomerId,
    region: c.region ?? undefined,
    currencies: c.currencies,
    email: c.email ?? undefined,
    umaAddress: c.umaAddress,
    address: c.address,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    isDeleted: c.isDeleted,
  };
  if (c.customerType === 'BUSINESS') {
    return { customerType: 'BUSINESS', ...common, kybStatus: c.verificationStatus, businessInfo: c.businessInfo, beneficialOwners: owners };
  }
  const { fullName, birthDate, nationality } = c;
  return { customerType: 'INDIVIDUAL', ...common, kycStatus: c.verificationStatus, fullName, birthDate, nationality };
}

/** The unique indexes guard against races a pre-check would miss; their violations become 409s. */
function conflict(error: unknown): unknown {
  if (isUniqueViolation(error, repo.UNIQUE_PLATFORM_CUSTOMER_ID)) {
    return new ServiceError('PLATFORM_CUSTOMER_ID_EXISTS', 'another customer already has this platformCustomerId');
  }
  if (isUniqueViolation(error, repo.UNIQUE_UMA_ADDRESS)) {
    return new ServiceError('UMA_ADDRESS_EXISTS', 'another customer already has this UMA address');
  }
  return error;
}

/** Latin letters that no Unicode decomposition turns into ASCII. */
const SPELLED_OUT: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i' };

function slug(name: string | undefined): string {
  const lower = (name ?? '').toLowerCase().replace(/[ßæœøđðłþı]/g, (letter) => SPELLED_OUT[letter]);
  const plain = lower.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  return plain.replace(/[^a-z0-9]+/g, '.').replace(/^\.+|\.+$/g, '').slice(0, 20).replace(/\.+$/, '') || 'customer';
}

/** `$<name>.<customer uuid in base 36>@<domain>`: readable, and unique because the id is. */
function generatedUmaAddress(id: string, name: string | undefined, domain: string): string {
  const uuid = id.slice(id.indexOf(':') + 1).replace(/-/g, '');
  return `$${slug(name)}.${BigInt(`0x${uuid}`).toString(36)}@${domain}`;
}

function supportedCodes(platform: Platform): string[] {
  return platform.supportedCurrencies.map((c) => c.currencyCode);
}

function newCustomerRow(platform: Platform, input: CustomerCreate, now: Date): CustomerRow {
  const id = newId('Customer');
  const individual = input.customerType === 'INDIVIDUAL' ? input : undefined;
  const business = input.customerType === 'BUSINESS' ? input : undefined;
  const details: CustomerDetails = individual
    ? { fullName: individual.fullName, birthDate: individual.birthDate, nationality: individual.nationality, address: individual.address }
    : { address: business?.address, businessInfo: business?.businessInfo };
  const name = individual?.fullName ?? business?.businessInfo?.legalName;
  return {
    id,
    platform_id: platform.id,
    platform_customer_id: input.platformCustomerId ?? id.slice(id.indexOf(':') + 1),
    customer_type: input.customerType,
    uma_address: input.umaAddress ?? generatedUmaAddress(id, name, platform.umaDomain),
    email: input.email ?? null,
    region: input.region ?? null,
    currencies: input.currencies ?? supportedCodes(platform),
    kyc_status: individual ? (individual.kycStatus ?? 'UNVERIFIED') : null,
    kyb_status: business ? (business.kybStatus ?? 'UNVERIFIED') : null,
    details: defined(details),
    is_deleted: false,
    created_at: now,
    updated_at: now,
  };
}

function changesFor(current: CustomerRow, patch: CustomerUpdate): repo.CustomerChanges {
  const changes: repo.CustomerChanges = { uma_address: patch.umaAddress, email: patch.email, currencies: patch.currencies };
  if (patch.customerType === 'INDIVIDUAL') {
    const { fullName, birthDate, nationality, address } = patch;
    changes.kyc_status = patch.kycStatus;
    changes.details = { ...current.details, ...defined({ fullName, birthDate, nationality, address }) };
  } else {
    const businessInfo = patch.businessInfo && { ...current.details.businessInfo, ...patch.businessInfo };
    if (businessInfo && !businessInfo.legalName) {
      throw invalidInput('businessInfo.legalName', 'businessInfo.legalName is required', 'required');
    }
    changes.kyb_status = patch.kybStatus;
    changes.details = { ...current.details, ...defined({ address: patch.address, businessInfo }) };
  }
  return defined(changes);
}

export function createCustomerService({ database, clock, accounts }: CustomerServiceDeps) {
  const remembered = rememberedRows<repo.CustomerRow>('customers');

  async function create(ctx: ServiceContext<Platform>, input: CustomerCreate): Promise<CustomerView> {
    const { platform } = ctx;
    const now = clock.now(platform);
    checkUmaAddress(input.umaAddress);
    checkCurrencies(input.currencies, platform);
    checkCustomerFields(input, platform, now);
    const row = newCustomerRow(platform, input, now);
    try {
      return await ctx.tx(async (trx) => {
        await repo.insertCustomer(trx, row);
        await accounts.openForCustomer(trx, platform, row.id, supportedCodes(platform));
        return present(toCustomer(row));
      });
    } catch (error) {
      throw conflict(error);
    }
  }

  const hooks: {
    /** What other domains do when a customer is deleted, in the same transaction. */
    deleted: Array<(trx: Trx, platform: PlatformRef, customerId: string) => Promise<unknown>>;
    /** What other domains do when a customer's verification becomes APPROVED, in the same transaction. */
    approved: Array<(trx: Trx, platform: PlatformRef, customerId: string) => Promise<unknown>>;
    /** The beneficial owners of business customers, by customer id (compliance keeps them). */
    beneficialOwners: (ex: Executor, platformId: string, customerIds: readonly string[]) => Promise<Map<string, BeneficialOwnerView[]>>;
  } = { deleted: [], approved: [], beneficialOwners: async () => new Map() };

  /** Views of customers of one platform; the owners of the businesses among them in one query. */
  async function views(ex: Executor, rows: CustomerRow[]): Promise<CustomerView[]> {
    const businesses = rows.filter((r) => r.customer_type === 'BUSINESS').map((r) => r.id);
    const owners = businesses.length > 0 ? await hooks.beneficialOwners(ex, rows[0].platform_id, businesses) : undefined;
    return rows.map((r) => present(toCustomer(r), owners?.get(r.id)));
  }

  const view = async (ex: Executor, row: CustomerRow) => (await views(ex, [row]))[0];

  async function get(ctx: ServiceContext, id: string): Promise<CustomerView> {
    const row = await repo.findCustomer(database.db, ctx.platform.id, id);
    if (!row) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
    return view(database.db, row);
  }

  async function list(ctx: ServiceContext, query: CustomerListQuery): Promise<Page<CustomerView>> {
    const page = await repo.listCustomers(database.db, ctx.platform.id, query);
    return { data: await views(database.db, page.rows), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  async function update(ctx: ServiceContext<Platform>, id: string, patch: CustomerUpdate): Promise<CustomerView> {
    const { platform } = ctx;
    const now = clock.now(platform);
    checkUmaAddress(patch.umaAddress);
    checkCurrencies(patch.currencies, platform);
    checkCustomerFields(patch, platform, now);
    try {
      return await ctx.tx(async (trx) => {
        const current = await repo.findCustomer(trx, platform.id, id, true);
        if (!current) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
        if (current.is_deleted) throw new ServiceError('CUSTOMER_DELETED', 'the customer has been deleted');
        if (current.customer_type !== patch.customerType) {
          throw invalidInput('customerType', `the customer is ${current.customer_type}; its type cannot change`, 'immutable');
        }
        return view(trx, await repo.updateCustomer(trx, id, changesFor(current, patch), now));
      });
    } catch (error) {
      throw conflict(error);
    }
  }

  async function remove(ctx: ServiceContext, id: string): Promise<CustomerView> {
    return ctx.tx(async (trx) => {
      const deleted = await repo.markDeleted(trx, ctx.platform.id, id, clock.now(ctx.platform));
      if (deleted) {
        for (const hook of hooks.deleted) await hook(trx, ctx.platform, id);
        return view(trx, deleted);
      }
      const existing = await repo.findCustomer(trx, ctx.platform.id, id);
      throw existing
        ? new ServiceError('CUSTOMER_DELETED', 'the customer has already been deleted')
        : new ServiceError('USER_NOT_FOUND', 'customer not found');
    });
  }

  /**
   * The customer, for modules acting on one; deleted customers count as missing. With `checks`,
   * the row may come from this process's memory: the caller's write must then verify `checks`.
   */
  async function requireCustomer(ex: Executor, platformId: string, customerId: string, checks?: RowChecks): Promise<Customer> {
    const row = checks
      ? await remembered.get(ex, platformId, customerId, checks)
      : await repo.findCustomer(ex, platformId, customerId);
    if (!row || row.is_deleted) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
    return toCustomer(row);
  }

  /**
   * Sets the customer's verification status (kycStatus of individuals, kybStatus of businesses)
   * in the caller's transaction; `changed` is false when it already had that status.
   */
  async function setVerificationStatus(trx: Trx, platform: PlatformRef, customerId: string, status: VerificationStatus) {
    const current = await repo.findCustomer(trx, platform.id, customerId, true);
    if (!current) throw new ServiceError('USER_NOT_FOUND', 'customer not found');
    const column = current.customer_type === 'INDIVIDUAL' ? 'kyc_status' : 'kyb_status';
    if (current[column] === status) return { changed: false, customer: await view(trx, current) };
    const updated = await repo.updateCustomer(trx, customerId, { [column]: status }, clock.now(platform));
    if (status === 'APPROVED') for (const hook of hooks.approved) await hook(trx, platform, customerId);
    return { changed: true, customer: await view(trx, updated) };
  }

  /** The non-deleted customer with this UMA address or platformCustomerId, if any. */
  async function findActive(ex: Executor, platformId: string, by: repo.ActiveCustomerKey) {
    const row = await repo.findActiveCustomerBy(ex, platformId, by);
    return row && toCustomer(row);
  }

  /**
   * The non-deleted customer with this id, share-locked until `trx` ends; undefined when there is
   * none (any more). A create that hangs a row off a customer calls it in its transaction, before
   * writing anything: a concurrent deletion then either commits first (this finds nothing) or
   * waits for the create to commit, and its `hooks.deleted` see the new row. A check before the
   * transaction alone would let a live child of a deleted customer through.
   */
  async function lockActive(trx: Trx, platformId: string, id: string) {
    const row = await repo.findActiveCustomerBy(trx, platformId, { id }, true);
    return row && toCustomer(row);
  }

  /**
   * Like lockActive, but exclusive (FOR UPDATE, the lock setVerificationStatus takes): for a
   * caller that decides on the customer, so that changes checked under lockActive wait for it.
   */
  async function lockForDecision(trx: Trx, platformId: string, id: string) {
    const row = await repo.findCustomer(trx, platformId, id, true);
    return row && !row.is_deleted ? toCustomer(row) : undefined;
  }

  return {
    hooks,
    create,
    get,
    list,
    update,
    remove,
    requireCustomer,
    approvedCondition: repo.approvedCondition,
    setVerificationStatus,
    findActive,
    lockActive,
    lockForDecision,
    /** Ids of the platform's customers that are not deleted. */
    activeIds: (ex: Executor, platformId: string) => repo.activeCustomerIds(ex, platformId),
  };
}

export type CustomerService = ReturnType<typeof createCustomerService>;
