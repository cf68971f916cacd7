import { KycStatus } from '@uma-sdk/core';
import type { Clock } from '../../core/clock.js';
import { findCurrency } from '../../core/currencies.js';
import type { Database } from '../../db/database.js';
import type { AccountService, InternalAccount } from '../accounts/service.js';
import type { Customer, CustomerService } from '../customers/service.js';
import type { ExternalAccountRecord, ExternalAccountService } from '../external-accounts/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import type { CurrencyConfigInput } from '../platform/schemas.js';
import { Dec } from '../rates/decimal.js';
import type { RateService } from '../rates/service.js';
import type { RequiredPayerField } from '../quotes/schemas.js';
import { mergeRequirements } from './payer-data.js';

/**
 * An error answered to another VASP, in the LNURL shape (`{status: "ERROR", reason}`) with UMA's
 * error code and HTTP status (UMA SDK error codes).
 */
export class ProtocolError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ProtocolError';
  }

  body(): Record<string, unknown> {
    return { status: 'ERROR', reason: this.message, code: this.code, ...this.extra };
  }
}

export interface ReceiverDeps {
  database: Database;
  clock: Clock;
  platforms: Pick<PlatformService, 'get' | 'list'>;
  customers: Pick<CustomerService, 'findActive'>;
  accounts: Pick<AccountService, 'findCustomerAccount'>;
  externalAccounts: Pick<ExternalAccountService, 'findDefaultUmaDepositAccount'>;
  rates: Pick<RateService, 'getRates'>;
}

const HIT_TTL_MS = 5_000;
const MISS_REBUILD_MS = 250;

/**
 * Which platform a UMA domain belongs to. Requests to `/.well-known/*` name the domain in their
 * Host header; a platform owns the domains equal to its `umaDomain` (case-insensitive, port
 * included). When several platforms share a domain (the default domain is the server's own),
 * the oldest one owns it: a VASP is one domain with one key. The map is rebuilt every few
 * seconds, and at once (at most every 250 ms) when a domain is not in it.
 */
export function createDomainDirectory(platforms: ReceiverDeps['platforms'], clock: Clock) {
  let map = new Map<string, string>();
  let builtAtMs = -Infinity;

  async function rebuild(): Promise<void> {
    const all = await platforms.list();
    const next = new Map<string, string>();
    for (const p of [...all].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))) {
      const domain = p.umaDomain.toLowerCase();
      if (!next.has(domain)) next.set(domain, p.id);
    }
    map = next;
    builtAtMs = clock.realNowMs();
  }

  return async function platformFor(domain: string | undefined): Promise<Platform> {
    const key = (domain ?? '').toLowerCase();
    const age = clock.realNowMs() - builtAtMs;
    if (age > HIT_TTL_MS || (!map.has(key) && age > MISS_REBUILD_MS)) await rebuild();
    const id = map.get(key);
    const platform = id ? await platforms.get(id) : undefined;
    if (!platform) throw new ProtocolError(404, 'USER_NOT_FOUND', `no platform receives UMA payments on ${key || 'this host'}`);
    return platform;
  };
}

/** The local part of an lnurlp path (`$bob` or `bob`) → the customer's UMA address on `domain`. */
export function addressOf(user: string, domain: string): string {
  const local = user.startsWith('$') ? user.slice(1) : user;
  return `$${local}@${domain}`.toLowerCase();
}

export async function requireReceiver(deps: ReceiverDeps, platform: Platform, address: string): Promise<Customer> {
  const customer = await deps.customers.findActive(deps.database.db, platform.id, { umaAddress: address });
  if (!customer) throw new ProtocolError(404, 'USER_NOT_FOUND', `${address} is not an UMA address here`);
  return customer;
}

export function kycStatusOf(customer: Pick<Customer, 'verificationStatus'> | null): KycStatus {
  switch (customer?.verificationStatus) {
    case 'APPROVED':
      return KycStatus.Verified;
    case 'PENDING':
      return KycStatus.Pending;
    case undefined:
      return KycStatus.Unknown;
    default:
      return KycStatus.NotVerified;
  }
}

/** A currency a customer can receive now, and where it lands. */
export interface Receivable {
  config: CurrencyConfigInput;
  decimals: number;
  /** Estimated millisatoshis per smallest unit (mid-market). */
  multiplier: number;
  /**
   * The most one payment can credit: the platform's maximum, or less where that many units would
   * be more millisatoshis than an invoice (and the API's JSON) holds exactly.
   */
  maxAmount: number;
}

export interface ReceivingPlan {
  currencies: Receivable[];
  /** The customer's defaultUmaDepositAccount, when payments are forwarded to it. */
  deposit: ExternalAccountRecord | null;
  requiredPayerData: RequiredPayerField[];
}

/** Millisatoshis per smallest unit of `code`, from the mid-market table (undefined when unpriced). */
export async function msatsPerUnit(rates: ReceiverDeps['rates'], code: string): Promise<number | undefined> {
  const known = findCurrency(code);
  const snapshot = await rates.getRates();
  const price = snapshot.usdPrices.get(code);
  const btc = snapshot.usdPrices.get('BTC');
  if (!known || !price || !btc) return undefined;
  const value = new Dec(price).div(btc).times(100_000_000_000).div(new Dec(10).pow(known.decimals));
  return value.toSignificantDigits(15).toNumber();
}

/**
 * What a customer can receive: the platform's currencies with INCOMING enabled that the customer
 * holds. A customer with a usable defaultUmaDepositAccount receives only that account's currency
 * (credited to their internal account, then forwarded).
 */
export async function receivingPlan(deps: ReceiverDeps, platform: Platform, customer: Customer): Promise<ReceivingPlan> {
  const enabled = platform.supportedCurrencies.filter((c) => c.enabledTransactionTypes.includes('INCOMING') && customer.currencies.includes(c.currencyCode));
  const deposit = await deps.externalAccounts.findDefaultUmaDepositAccount(deps.database.db, platform.id, customer.id);
  const usable = deposit && deposit.status !== 'INACTIVE' && enabled.some((c) => c.currencyCode === deposit.currency) ? deposit : null;
  const chosen = usable ? enabled.filter((c) => c.currencyCode === usable.currency) : enabled;
  const currencies: Receivable[] = [];
  for (const config of chosen) {
    const multiplier = await msatsPerUnit(deps.rates, config.currencyCode);
    if (multiplier === undefined) continue;
    const maxAmount = Math.min(config.maxAmount, Math.floor(Number.MAX_SAFE_INTEGER / multiplier));
    currencies.push({ config, decimals: findCurrency(config.currencyCode)!.decimals, multiplier, maxAmount });
  }
  const requiredPayerData = mergeRequirements(currencies.map((c) => c.config.requiredCounterpartyFields));
  return { currencies, deposit: usable, requiredPayerData };
}

/** The internal account a payment in `currency` credits. */
export async function creditedAccount(deps: ReceiverDeps, platform: Platform, customer: Customer, currency: string): Promise<InternalAccount> {
  const account = await deps.accounts.findCustomerAccount(deps.database.db, platform.id, customer.id, currency);
  if (!account) throw new ProtocolError(400, 'INVALID_CURRENCY', `${customer.umaAddress} has no ${currency} account`);
  return account;
}
