import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { currency } from '../../core/currencies.js';
import { ServiceError } from '../../core/errors.js';
import { isIdOf, newId } from '../../core/ids.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import type { Page } from '../../http/pagination.js';
import { eventRows } from '../../core/events.js';
import { addToOutbox, type BalanceEventRow } from '../../core/outbox.js';
import type { BalanceChange, LedgerBalance, LedgerService } from '../ledger/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import { isCryptoCurrency, newFundingReference, sandboxFundingInstructions } from './funding.js';
import * as repo from './repository.js';
import type { InternalAccountRow } from './repository.js';
import type { CustomerAccountListQuery, InternalAccountType, InternalAccountView, PaymentInstructions, PlatformAccountListQuery } from './schemas.js';

export interface AccountServiceDeps {
  database: Database;
  clock: Clock;
  ledger: LedgerService;
  platforms: PlatformService;
  /** Ids of the platform's customers that are not deleted (from the customers service). */
  activeCustomerIds: (ex: Executor, platformId: string) => Promise<string[]>;
}

/** An internal account as other modules see it. Its id is also its ledger account id. */
export interface InternalAccount {
  id: string;
  platformId: string;
  /** null for the platform's own accounts. */
  customerId: string | null;
  type: InternalAccountType;
  currency: string;
  /** Reference a depositor quotes so incoming funds are credited to this account. */
  fundingReference: string;
  createdAt: Date;
  updatedAt: Date;
}

function toAccount(row: InternalAccountRow): InternalAccount {
  return {
    id: row.id,
    platformId: row.platform_id,
    customerId: row.customer_id,
    type: row.type,
    currency: row.currency,
    fundingReference: row.funding_reference,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

interface Opening {
  customerId: string | null;
  currency: string;
  /** Default: INTERNAL_CRYPTO or INTERNAL_FIAT by currency. */
  type?: InternalAccountType;
}

const ZERO: LedgerBalance = { available: 0, posted: 0, updatedAt: new Date(0) };

// Stand-ins for the balances and the time in a prepared balance event: above any amount an
// account can hold (amounts are at most 9e15), and the last time a date can show, so that their
// text appears nowhere else in an account's view.
export const AVAILABLE_MARK = Number.MAX_SAFE_INTEGER;
export const POSTED_MARK = Number.MAX_SAFE_INTEGER - 1;
export const UPDATED_AT_MARK = new Date(8.64e15);

const MARKS = [String(AVAILABLE_MARK), String(POSTED_MARK), UPDATED_AT_MARK.toISOString()];

/** The text around the three stand-ins, in that order and once each; null otherwise. */
export function splitAroundBalances(data: string): [string, string, string, string] | null {
  const parts = [data];
  for (const mark of MARKS) {
    const [before, after, ...extra] = parts.pop()!.split(mark);
    if (after === undefined || extra.length > 0) return null;
    parts.push(before, after);
  }
  return parts as [string, string, string, string];
}

export function createAccountService(deps: AccountServiceDeps) {
  const { database, clock, ledger } = deps;

  /** Opens Corridor-held accounts (ledger account first: the internal account shares its id). */
  async function open(trx: Trx, platform: PlatformRef, openings: Opening[]): Promise<InternalAccount[]> {
    if (openings.length === 0) return [];
    const now = clock.now(platform);
    const rows: InternalAccountRow[] = openings.map((o) => ({
      id: newId('InternalAccount'),
      platform_id: platform.id,
      customer_id: o.customerId,
      type: o.type ?? (isCryptoCurrency(o.currency) ? 'INTERNAL_CRYPTO' : 'INTERNAL_FIAT'),
      currency: o.currency,
      funding_reference: newFundingReference(),
      created_at: now,
      updated_at: now,
    }));
    await ledger.openAccounts(
      trx,
      rows.map((r) => ({ id: r.id, platformId: platform.id, currency: r.currency, kind: r.customer_id ? 'CUSTOMER' : 'PLATFORM' })),
      now,
    );
    await repo.insertAccounts(trx, rows);
    return rows.map(toAccount);
  }

  async function openForPlatform(trx: Trx, platform: PlatformRef, currencies: string[]): Promise<InternalAccount[]> {
    return open(trx, platform, [...new Set(currencies)].map((code) => ({ customerId: null, currency: code })));
  }

  /**
   * Opens a new customer's accounts. Call it after inserting the customer row: that insert locks
   * the platform row against a concurrent configuration change, so any currency the platform
   * gained after `platform` was read already has its platform account, and is opened here too.
   */
  async function openForCustomer(trx: Trx, platform: Platform, customerId: string, currencies: string[]): Promise<InternalAccount[]> {
    const gained = await repo.platformCurrenciesOpenedSince(trx, platform.id, platform.updatedAt);
    const codes = [...new Set([...currencies, ...gained])];
    // Read fresh: the customer row inserted before holds off concurrent configuration changes.
    const wallets = (await deps.platforms.read(trx, platform.id))?.embeddedWallets.currencies ?? [];
    return open(trx, platform, [
      ...codes.map((code) => ({ customerId, currency: code })),
      ...wallets.map((code) => ({ customerId, currency: code, type: 'EMBEDDED_WALLET' as const })),
    ]);
  }

  /** Currencies added to the platform's embedded wallets: a wallet in each for every customer not deleted. */
  async function openAddedWallets(trx: Trx, platform: Platform, codes: string[]): Promise<void> {
    const customers = await deps.activeCustomerIds(trx, platform.id);
    const existing = await repo.holders(trx, platform.id, codes, ['EMBEDDED_WALLET']);
    const openings = customers
      .flatMap((customerId) => codes.map((code) => ({ customerId, currency: code, type: 'EMBEDDED_WALLET' as const })))
      .filter((o) => !existing.has(`${o.customerId}|${o.currency}`));
    await open(trx, platform, openings);
  }

  /** A currency added to the platform: open it for the platform and every customer not deleted. */
  async function openAddedCurrencies(trx: Trx, platform: Platform, codes: string[]): Promise<void> {
    const owners: Array<string | null> = [null, ...(await deps.activeCustomerIds(trx, platform.id))];
    // A currency removed and added again: its old accounts still exist and stay in use.
    const existing = await repo.holders(trx, platform.id, codes);
    const openings = owners
      .flatMap((customerId) => codes.map((code) => ({ customerId, currency: code })))
      .filter((o) => !existing.has(`${o.customerId ?? ''}|${o.currency}`));
    await open(trx, platform, openings);
  }

  deps.platforms.hooks.platformCreated.push((trx, platform) =>
    openForPlatform(trx, platform, platform.supportedCurrencies.map((c) => c.currencyCode)).then(() => undefined),
  );
  deps.platforms.hooks.currenciesAdded.push(openAddedCurrencies);
  deps.platforms.hooks.walletCurrenciesAdded.push(openAddedWallets);
  ledger.announceBalancesWith({ prepare: prepareBalanceEvents, changed: emitBalanceUpdates });

  // Internal accounts never change once opened (nothing updates or deletes their rows), so
  // reading one by id (a quote's source, a balance event while the account's row is locked)
  // needs the database once per process. Bounded: cleared when full.
  const accountCache = new Map<string, InternalAccount>();
  const ACCOUNT_CACHE_MAX = 20_000; // about 1 KB each

  async function accountsById(ex: Executor, platformId: string, ids: string[]): Promise<InternalAccount[]> {
    const missing = ids.filter((id) => !accountCache.has(id));
    if (missing.length > 0) {
      if (accountCache.size + missing.length > ACCOUNT_CACHE_MAX) accountCache.clear();
      for (const row of await repo.findAccounts(ex, platformId, missing)) accountCache.set(row.id, toAccount(row));
    }
    return ids.map((id) => accountCache.get(id)).filter((a): a is InternalAccount => a?.platformId === platformId);
  }

  /**
   * INTERNAL_ACCOUNT.BALANCE_UPDATED for every internal account whose balance just changed, at
   * the time the ledger gave the change (which orders an account's events), not the clock's.
   */
  async function emitBalanceUpdates(trx: Trx, platform: PlatformRef, changes: BalanceChange[]): Promise<void> {
    const byId = new Map(changes.map((c) => [c.accountId, c]));
    const changed = (await accountsById(trx, platform.id, [...byId.keys()])).map((account) => ({ account, change: byId.get(account.id)! }));
    const events = changed.map(({ account, change }) => ({ type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED' as const, data: view(platform, account, change) }));
    const rows = eventRows(platform, events, clock).map((row, i) => ({ ...row, created_at: changed[i].change.updatedAt }));
    await addToOutbox(trx, { events: rows });
  }

  /**
   * INTERNAL_ACCOUNT.BALANCE_UPDATED for the internal accounts among `accountIds`, with their
   * balances and time left open for the ledger's statement to fill in (see BalanceEventRow). Null
   * if a view cannot be split around them (the ledger then announces after its call).
   */
  async function prepareBalanceEvents(ex: Executor, platform: PlatformRef, accountIds: string[]): Promise<BalanceEventRow[] | null> {
    const accounts = await accountsById(ex, platform.id, accountIds.filter((id) => isIdOf('InternalAccount', id)));
    const marked = { available: AVAILABLE_MARK, posted: POSTED_MARK, updatedAt: UPDATED_AT_MARK };
    const events = accounts.map((account) => ({ type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED' as const, data: view(platform, account, marked) }));
    const rows: BalanceEventRow[] = [];
    for (const [i, { data, created_at: _, ...row }] of eventRows(platform, events, clock).entries()) {
      const parts = splitAroundBalances(data);
      if (!parts) return null;
      rows.push({ ...row, account_id: accounts[i].id, parts });
    }
    return rows;
  }

  async function getAccount(ex: Executor, platformId: string, accountId: string): Promise<InternalAccount> {
    const [account] = await accountsById(ex, platformId, [accountId]);
    if (!account) throw new ServiceError('NOT_FOUND', 'internal account not found');
    return account;
  }

  async function findCustomerAccount(ex: Executor, platformId: string, customerId: string, code: string): Promise<InternalAccount | undefined> {
    const row = await repo.findCustomerAccount(ex, platformId, customerId, code);
    return row && toAccount(row);
  }

  // Deposit details are derived from the account's id and reference (hashes, check digits), never
  // change, and every balance event carries them: derived once per account object, and the
  // cached accounts (accountsById) are the ones balance events use.
  const depositDetails = new WeakMap<InternalAccount, PaymentInstructions[]>();
  function sandboxInstructions(account: InternalAccount): PaymentInstructions[] {
    let instructions = depositDetails.get(account);
    if (!instructions) depositDetails.set(account, (instructions = sandboxFundingInstructions(account)));
    return instructions;
  }

  function view(platform: PlatformRef, account: InternalAccount, balance: LedgerBalance): InternalAccountView {
    const money = (amount: number) => ({ amount, currency: currency(account.currency) });
    const updatedAt = balance.updatedAt > account.updatedAt ? balance.updatedAt : account.updatedAt;
    return {
      id: account.id,
      ...(account.customerId && { customerId: account.customerId }),
      type: account.type,
      balance: money(balance.available),
      totalBalance: money(balance.posted),
      // Production platforms show no made-up bank details: deposits there need a configured rail.
      fundingPaymentInstructions: platform.mode === 'SANDBOX' ? sandboxInstructions(account) : [],
      createdAt: account.createdAt.toISOString(),
      updatedAt: updatedAt.toISOString(),
    };
  }

  /** API views of accounts, with their balances read in one query. */
  async function present(ex: Executor, platform: PlatformRef, accounts: InternalAccount[]): Promise<InternalAccountView[]> {
    const balances = await ledger.balances(ex, accounts.map((a) => a.id));
    return accounts.map((a) => view(platform, a, balances.get(a.id) ?? ZERO));
  }

  async function list(ctx: ServiceContext, filter: repo.AccountFilter): Promise<Page<InternalAccountView>> {
    const page = await repo.listAccounts(database.db, ctx.platform.id, filter);
    const data = await present(database.db, ctx.platform, page.rows.map(toAccount));
    return { data, hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  return {
    openForCustomer,
    openForPlatform,
    getAccount,
    findCustomerAccount,
    present,
    presentOne: async (ex: Executor, platform: PlatformRef, account: InternalAccount) => (await present(ex, platform, [account]))[0],
    // Filters named one by one: a query string may carry parameters a route does not take (ignored).
    listCustomerAccounts: (ctx: ServiceContext, { customerId, currency, type, limit, cursor }: CustomerAccountListQuery) =>
      list(ctx, { owner: 'customers', customerId, currency, type, limit, cursor }),
    listPlatformAccounts: (ctx: ServiceContext, { currency, type, limit, cursor }: PlatformAccountListQuery) =>
      list(ctx, { owner: 'platform', currency, type, limit, cursor }),
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
