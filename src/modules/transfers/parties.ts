import { ServiceError, type ErrorCode, type FieldError } from '../../core/errors.js';
import type { RowChecks } from '../../core/row-checks.js';
import type { Database } from '../../db/database.js';
import type { AccountService, InternalAccount } from '../accounts/service.js';
import type { VerificationStatus } from '../customers/schemas.js';
import type { CustomerService } from '../customers/service.js';
import type { ExternalAccountRecord, ExternalAccountService } from '../external-accounts/service.js';
import type { Platform } from '../platform/service.js';
import type { TransferInput } from './schemas.js';

/** OUTGOING: internal account → external account; INCOMING: external account → internal account. */
export type Direction = 'OUTGOING' | 'INCOMING';

/** Everything a transfer needs to know about its two accounts, checked. */
export interface TransferParties {
  direction: Direction;
  internal: InternalAccount;
  external: ExternalAccountRecord;
  /** The owner of both accounts; null when they are the platform's own. */
  customer: { id: string; platformCustomerId: string; verificationStatus: VerificationStatus } | null;
  currency: string;
  amount: number;
}

export interface PartyLookups {
  database: Database;
  accounts: Pick<AccountService, 'getAccount'>;
  externalAccounts: Pick<ExternalAccountService, 'findExternalAccount'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
}

function fieldError(code: ErrorCode, field: string, constraint: string, message: string, extra: Record<string, unknown> = {}): ServiceError {
  return new ServiceError(code, message, { details: { ...extra, errors: [{ field, constraint, message }] satisfies FieldError[] } });
}

/** Which request field names which account, per direction. */
function fieldsOf(direction: Direction) {
  return direction === 'OUTGOING'
    ? { internal: 'source.accountId', external: 'destination.accountId' }
    : { internal: 'destination.accountId', external: 'source.accountId' };
}

async function loadAccounts(lookups: PartyLookups, platformId: string, direction: Direction, input: TransferInput, checks: RowChecks) {
  const fields = fieldsOf(direction);
  const [internalId, externalId] = direction === 'OUTGOING' ? [input.source.accountId, input.destination.accountId] : [input.destination.accountId, input.source.accountId];
  const { db } = lookups.database;
  const [internal, external] = await Promise.all([
    lookups.accounts.getAccount(db, platformId, internalId).catch((error: unknown) => {
      if (error instanceof ServiceError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }),
    lookups.externalAccounts.findExternalAccount(db, platformId, externalId, checks),
  ]);
  if (!internal) throw fieldError('NOT_FOUND', fields.internal, 'exists', `internal account ${internalId} not found`);
  if (!external) throw fieldError('NOT_FOUND', fields.external, 'exists', `external account ${externalId} not found`);
  return { internal, external };
}

/** Rails on which the receiving side can pull money from the account (ACH debits, SEPA direct debits). */
const PULL_RAILS: ReadonlySet<string> = new Set(['ACH', 'SEPA']);

/** A transfer in pulls the money, so its external account needs a rail that can debit it. */
export function checkPullable(external: Pick<ExternalAccountRecord, 'paymentRails' | 'accountType'>, field: string): void {
  if (external.paymentRails.some((rail) => PULL_RAILS.has(rail))) return;
  throw fieldError(
    'INVALID_INPUT',
    field,
    'accountType',
    `a transfer in pulls the money by ACH or SEPA direct debit, which a ${external.accountType} does not offer; deposit to the internal account's paymentInstructions instead`,
  );
}

/** A transfer out of an embedded wallet would need its owner's signature, which transfers do not take. */
export function checkNotWallet(internal: Pick<InternalAccount, 'type'>, field: string): void {
  if (internal.type !== 'EMBEDDED_WALLET') return;
  throw fieldError(
    'INVALID_INPUT',
    field,
    'accountType',
    'transfers out of an embedded wallet need the wallet owner\'s signature and are not supported here; create a quote and execute it with Service-Wallet-Signature',
  );
}

/** Rules on the pair of accounts: same owner, same currency, usable, and pullable for a transfer in. */
function checkPair(direction: Direction, internal: InternalAccount, external: ExternalAccountRecord): void {
  const fields = fieldsOf(direction);
  if (direction === 'INCOMING') checkPullable(external, fields.external);
  if (internal.customerId !== external.customerId) {
    const owner = internal.customerId ? `customer ${internal.customerId}` : 'the platform';
    throw fieldError('INVALID_INPUT', fields.external, 'owner', `the external account must belong to the owner of the internal account (${owner})`);
  }
  if (direction === 'OUTGOING') checkNotWallet(internal, fields.internal);
  if (internal.currency !== external.currency) {
    throw fieldError(
      'INVALID_CURRENCY',
      fields.external,
      'currency',
      `transfers are same-currency only: the internal account holds ${internal.currency}, the external account ${external.currency}`,
    );
  }
  if (external.status === 'INACTIVE') {
    throw fieldError('INVALID_BANK_ACCOUNT', fields.external, 'status', 'the external account is inactive and cannot be used for transfers');
  }
}

/** The platform's limits for the currency and direction. */
function checkLimits(platform: Platform, direction: Direction, currency: string, amount: number, internalField: string): void {
  const config = platform.supportedCurrencies.find((c) => c.currencyCode === currency);
  if (!config) {
    throw fieldError('INVALID_CURRENCY', internalField, 'supported', `${currency} is not enabled for this platform (see supportedCurrencies in /config)`);
  }
  if (!config.enabledTransactionTypes.includes(direction)) {
    throw fieldError('INVALID_CURRENCY', internalField, 'enabledTransactionTypes', `${direction} payments are not enabled for ${currency} on this platform`);
  }
  const limits = { minAmount: config.minAmount, maxAmount: config.maxAmount };
  if (amount < config.minAmount) {
    throw fieldError('AMOUNT_OUT_OF_RANGE', 'amount', 'minimum', `amount must be at least ${config.minAmount} for ${currency}`, limits);
  }
  if (amount > config.maxAmount) {
    throw fieldError('AMOUNT_OUT_OF_RANGE', 'amount', 'maximum', `amount must be at most ${config.maxAmount} for ${currency}`, limits);
  }
}

/**
 * Finds and checks both accounts of a transfer (404 for ids unknown on this platform, 400 for
 * every rule broken). Reads run in parallel, outside any transaction; the external account and
 * the customer may come from this process's memory, so the transfer's write must verify `checks`.
 */
export async function resolveParties(
  lookups: PartyLookups,
  platform: Platform,
  direction: Direction,
  input: TransferInput,
  checks: RowChecks,
): Promise<TransferParties> {
  const { internal, external } = await loadAccounts(lookups, platform.id, direction, input, checks);
  checkPair(direction, internal, external);
  checkLimits(platform, direction, internal.currency, input.amount, fieldsOf(direction).internal);
  let customer: TransferParties['customer'] = null;
  if (internal.customerId) {
    const found = await lookups.customers.requireCustomer(lookups.database.db, platform.id, internal.customerId, checks);
    customer = { id: found.id, platformCustomerId: found.platformCustomerId, verificationStatus: found.verificationStatus };
  }
  return { direction, internal, external, customer, currency: internal.currency, amount: input.amount };
}
