import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import { rememberedRows, type RowChecks } from '../../core/row-checks.js';
import { newId } from '../../core/ids.js';
import { isUniqueViolation, type Database, type Executor, type Trx } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import type { DiscoveryService } from '../discovery/service.js';
import { accountTypeDef, type AccountInfo } from './account-types/index.js';
import * as repo from './repository.js';
import type { ExternalAccountRow, Owner } from './repository.js';
import type {
  AccountStatus,
  CustomerExternalAccountCreate,
  ExternalAccountListQuery,
  ExternalAccountView,
  PlatformExternalAccountCreate,
  VerificationStatus,
} from './schemas.js';
import { validateAccount, type ValidatedAccount } from './validate.js';
import {
  accountStatusFor,
  holderName,
  sandboxVerification,
  type BeneficiaryVerifier,
  type VerificationOutcome,
} from './verification.js';

export type { Owner } from './repository.js';

/** The part of the customers service this module relies on. */
export interface CustomerLookup {
  /** Throws 404 USER_NOT_FOUND unless the customer exists, is not deleted and belongs to the platform. */
  requireCustomer(ex: Executor, platformId: string, customerId: string): Promise<unknown>;
  /** The non-deleted customer, share-locked until `trx` ends (a deletion waits); undefined when none. */
  lockActive(trx: Trx, platformId: string, customerId: string): Promise<unknown>;
}

export interface ExternalAccountServiceDeps {
  database: Database;
  clock: Clock;
  discovery: Pick<DiscoveryService, 'findInstitution'>;
  customers: CustomerLookup;
  /** Real beneficiary-name checks for production platforms; without one they report UNSUPPORTED. */
  beneficiaryVerifier?: BeneficiaryVerifier;
}

/** An external account as other modules see it (transfers, quotes, UMA deposits, sandbox rails). */
export interface ExternalAccountRecord {
  id: string;
  platformId: string;
  customerId: string | null;
  currency: string;
  accountType: string;
  /** Main identifier (account number, IBAN, CLABE, PIX key, phone, wallet address…). */
  identifier: string;
  accountInfo: AccountInfo;
  paymentRails: string[];
  status: AccountStatus;
  beneficiaryVerificationStatus: VerificationStatus | null;
  beneficiaryVerifiedData: { fullName?: string } | null;
  defaultUmaDepositAccount: boolean;
  platformAccountId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toRecord(row: ExternalAccountRow): ExternalAccountRecord {
  return {
    id: row.id,
    platformId: row.platform_id,
    customerId: row.customer_id,
    currency: row.currency,
    accountType: row.account_type,
    identifier: row.identifier,
    accountInfo: row.account_info,
    paymentRails: accountTypeDef(row.account_type).railsFor(row.account_info),
    status: row.status,
    beneficiaryVerificationStatus: row.beneficiary_verification_status,
    beneficiaryVerifiedData: row.beneficiary_verified_data,
    defaultUmaDepositAccount: row.default_uma_deposit_account,
    platformAccountId: row.platform_account_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The API view of an account. */
export function present(account: ExternalAccountRecord): ExternalAccountView {
  const rails = account.paymentRails;
  return {
    id: account.id,
    ...(account.customerId !== null && { customerId: account.customerId }),
    status: account.status,
    ...(account.platformAccountId !== null && { platformAccountId: account.platformAccountId }),
    currency: account.currency,
    defaultUmaDepositAccount: account.defaultUmaDepositAccount,
    ...(account.beneficiaryVerificationStatus && { beneficiaryVerificationStatus: account.beneficiaryVerificationStatus }),
    ...(account.beneficiaryVerifiedData && { beneficiaryVerifiedData: account.beneficiaryVerifiedData }),
    accountInfo: { ...account.accountInfo, ...(rails.length > 0 && { paymentRails: rails }) },
    createdAt: account.createdAt.toISOString(),
    updatedAt: account.updatedAt.toISOString(),
  };
}

const notFound = () => new ServiceError('NOT_FOUND', 'external account not found');

export function createExternalAccountService(deps: ExternalAccountServiceDeps) {
  const remembered = rememberedRows<repo.ExternalAccountRow>('external_accounts');
  const { database, clock, discovery, customers } = deps;

  /** Beneficiary name check; wallets have no holder to check. Runs outside any transaction. */
  async function verify(platform: PlatformRef, account: ValidatedAccount, currency: string): Promise<VerificationOutcome | undefined> {
    if (!account.def.individual) return undefined;
    const name = holderName(account.info.beneficiary) ?? '';
    const identifier = account.identifier.value;
    let outcome: VerificationOutcome | 'INVALID_ACCOUNT' = { status: 'UNSUPPORTED' };
    if (platform.mode === 'SANDBOX') outcome = sandboxVerification(identifier, name);
    else if (deps.beneficiaryVerifier) {
      outcome = await deps.beneficiaryVerifier({ accountType: account.def.accountType, currency, identifier, holderName: name });
    }
    if (outcome === 'INVALID_ACCOUNT') {
      const message = 'the receiving institution reports that this account does not exist or cannot receive payments';
      throw new ServiceError('INVALID_BANK_ACCOUNT', message, {
        details: { errors: [{ field: `accountInfo.${account.identifier.field}`, constraint: 'exists', message }] },
      });
    }
    return outcome;
  }

  function newRow(
    ctx: ServiceContext,
    input: CustomerExternalAccountCreate,
    account: ValidatedAccount,
    verification: VerificationOutcome | undefined,
    now: Date,
  ): ExternalAccountRow {
    const ownId = input.platformAccountId ?? account.info.platformAccountId;
    return {
      id: newId('ExternalAccount'),
      platform_id: ctx.platform.id,
      customer_id: input.customerId ?? null,
      currency: input.currency,
      account_type: account.def.accountType,
      account_info: account.info,
      identifier: account.identifier.value,
      platform_account_id: typeof ownId === 'string' ? ownId : null,
      status: accountStatusFor(verification?.status),
      beneficiary_verification_status: verification?.status ?? null,
      beneficiary_verified_data: verification?.verifiedName ? { fullName: verification.verifiedName } : null,
      default_uma_deposit_account: input.defaultUmaDepositAccount === true,
      is_deleted: false,
      created_at: now,
      updated_at: now,
    };
  }

  async function insert(trx: Executor, row: ExternalAccountRow): Promise<void> {
    try {
      await repo.insertAccount(trx, row);
    } catch (error) {
      if (isUniqueViolation(error, 'external_accounts_identity')) {
        throw new ServiceError('CONFLICT', `this ${row.account_type} is already registered for this owner`);
      }
      throw error;
    }
  }

  async function create(ctx: ServiceContext, input: CustomerExternalAccountCreate): Promise<ExternalAccountView> {
    const now = clock.now(ctx.platform);
    if (input.defaultUmaDepositAccount && !input.customerId) {
      throw invalidInput('defaultUmaDepositAccount', 'only a customer account can be the default UMA deposit account', 'dependency');
    }
    const account = validateAccount(input, discovery, now);
    if (input.customerId) await customers.requireCustomer(database.db, ctx.platform.id, input.customerId);
    const row = newRow(ctx, input, account, await verify(ctx.platform, account, input.currency), now);
    return ctx.tx(async (trx) => {
      // Checked again under the customer's row lock: a deletion that committed since the check
      // above is a 404; one still running waits, then deletes this account. Taken before any write,
      // in the deletion's order (customer, then its accounts), so the two cannot deadlock.
      if (row.customer_id && !(await customers.lockActive(trx, ctx.platform.id, row.customer_id))) {
        throw new ServiceError('USER_NOT_FOUND', 'customer not found');
      }
      if (row.customer_id && row.default_uma_deposit_account) await repo.clearDefaultUmaAccount(trx, row.customer_id, now);
      await insert(trx, row);
      return present(toRecord(row));
    });
  }

  async function get(ctx: ServiceContext, owner: Owner, id: string): Promise<ExternalAccountView> {
    const row = await repo.findAccount(database.db, ctx.platform.id, id, owner);
    if (!row) throw notFound();
    return present(toRecord(row));
  }

  async function list(ctx: ServiceContext, owner: Owner, { currency, customerId, limit, cursor }: ExternalAccountListQuery): Promise<Page<ExternalAccountView>> {
    // Filters named one by one: a query string may carry parameters a route does not take (ignored),
    // and the platform's list has no customerId filter.
    const filter = { owner, currency, limit, cursor, ...(owner === 'customer' && { customerId }) };
    const page = await repo.listAccounts(database.db, ctx.platform.id, filter);
    return { data: page.rows.map((row) => present(toRecord(row))), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  async function remove(ctx: ServiceContext, owner: Owner, id: string): Promise<void> {
    const removed = await ctx.tx((trx) => repo.softDelete(trx, ctx.platform.id, id, owner, clock.now(ctx.platform)));
    if (!removed) throw notFound();
  }

  /**
   * The platform's account (customer's or its own), or undefined when unknown or deleted. With
   * `checks`, the row may come from this process's memory: the caller's write must then verify
   * `checks`.
   */
  async function findExternalAccount(ex: Executor, platformId: string, id: string, checks?: RowChecks): Promise<ExternalAccountRecord | undefined> {
    const row = checks
      ? await remembered.get(ex, platformId, id, checks)
      : await repo.findAccount(ex, platformId, id);
    return row && !row.is_deleted ? toRecord(row) : undefined;
  }

  return {
    /** POST /customers/external-accounts; without customerId the account belongs to the platform. */
    createForCustomer: create,
    createForPlatform: (ctx: ServiceContext, input: PlatformExternalAccountCreate) => create(ctx, input),
    get,
    list,
    remove,
    present,
    findExternalAccount,
    /** Like findExternalAccount, but 404 NOT_FOUND when there is no such live account. */
    async getExternalAccount(ex: Executor, platformId: string, id: string): Promise<ExternalAccountRecord> {
      const account = await findExternalAccount(ex, platformId, id);
      if (!account) throw notFound();
      return account;
    },
    /** findExternalAccount as a condition inside a statement (true while the account is live). */
    liveCondition: repo.liveCondition,
    /** Deletes every account of a customer (for the customers module to call when it deletes one). */
    deleteCustomerAccounts: (ex: Executor, platform: PlatformRef, customerId: string) =>
      repo.softDeleteForCustomer(ex, platform.id, customerId, clock.now(platform)),
    /** Where incoming UMA payments for the customer should land, when they chose an external account. */
    async findDefaultUmaDepositAccount(ex: Executor, platformId: string, customerId: string): Promise<ExternalAccountRecord | undefined> {
      const row = await repo.findDefaultUmaAccount(ex, platformId, customerId);
      return row && toRecord(row);
    },
  };
}

export type ExternalAccountService = ReturnType<typeof createExternalAccountService>;
