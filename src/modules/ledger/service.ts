import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import * as repo from './repository.js';
import { recordLegs, resolvePending, transactionsWithPendingLegs, transfersOf, type BalanceChange, type Leg, type ResolveTarget } from './transfers.js';
import { verifyLedger } from './verify.js';

export type { LedgerAccountKind, LedgerBalance, NewLedgerAccount } from './repository.js';
export type { BalanceChange, Leg, TransferRow } from './transfers.js';
export type { LedgerProblem, LedgerReport } from './verify.js';

/** System accounts a platform has per currency: the other side of money entering or leaving. */
export type SystemAccountCode =
  /** Money arriving from or leaving to bank rails (transfers in and out, payouts). */
  | 'RAIL_SETTLEMENT'
  /** Sandbox money printed by the fund endpoint and simulated deposits. */
  | 'SANDBOX_FUNDING'
  /** Liquidity that converts one currency into another. */
  | 'FX'
  /** Fees earned. */
  | 'FEES'
  /** Value settled with UMA counterparties. */
  | 'UMA_SETTLEMENT';

export interface LedgerServiceDeps {
  database: Database;
  clock: Clock;
}

type BalanceHook = (trx: Trx, platform: PlatformRef, changes: BalanceChange[]) => Promise<void>;

/**
 * The double-entry ledger: accounts with posted and pending (held) balances, immutable transfers,
 * and the invariant checks. Customer and platform accounts can never go below zero available:
 * the database refuses it (ledger_accounts_no_overdraft), whatever the concurrency.
 */
export function createLedgerService({ database, clock }: LedgerServiceDeps) {
  const hooks: { balancesChanged: BalanceHook[] } = { balancesChanged: [] };
  // System account id → its creation (shared by concurrent callers; kept once it succeeded).
  const ensuredSystemAccounts = new Map<string, Promise<void>>();

  async function notify(trx: Trx, platform: PlatformRef, changes: BalanceChange[]): Promise<BalanceChange[]> {
    if (changes.length > 0) for (const hook of hooks.balancesChanged) await hook(trx, platform, changes);
    return changes;
  }

  /**
   * The id of a platform's system account for a currency, creating it on first use. Creation
   * commits on its own (outside the caller's transaction), so the cached id always exists.
   */
  async function systemAccount(platformId: string, currency: string, code: SystemAccountCode): Promise<string> {
    const id = `LedgerAccount:SYS:${platformId}:${currency}:${code}`;
    let ensured = ensuredSystemAccounts.get(id);
    if (!ensured) {
      ensured = repo.insertSystemAccount(database.db, { id, platformId, currency, code }, new Date(clock.realNowMs()));
      ensuredSystemAccounts.set(id, ensured);
      ensured.catch(() => ensuredSystemAccounts.delete(id));
    }
    await ensured;
    return id;
  }

  return {
    hooks,
    systemAccount,
    /** Opens accounts with zero balances, in the caller's transaction (one statement). */
    openAccounts: (trx: Trx, accounts: repo.NewLedgerAccount[], now: Date): Promise<void> => repo.insertAccounts(trx, accounts, now),
    /** Balances by account id (one query); ids that do not exist are absent from the map. */
    balances: (ex: Executor, ids: string[]): Promise<Map<string, repo.LedgerBalance>> => repo.selectBalances(ex, ids),
    /**
     * Records legs (posted or held) in the caller's transaction; throws INSUFFICIENT_FUNDS when a
     * customer or platform account would go below zero available.
     */
    async record(trx: Trx, platform: PlatformRef, legs: Leg[], transactionId: string | null = null): Promise<BalanceChange[]> {
      return notify(trx, platform, await recordLegs(trx, platform.id, transactionId, legs, clock.now(platform)));
    },
    /** Posts or voids a transaction's pending legs (or the given transfers); idempotent. */
    async resolve(trx: Trx, platform: PlatformRef, target: ResolveTarget, outcome: 'POST' | 'VOID'): Promise<BalanceChange[]> {
      return notify(trx, platform, await resolvePending(trx, platform.id, target, outcome, clock.now(platform)));
    },
    transfersOf,
    transactionsWithPendingLegs,
    verify: (ex: Executor, platformId?: string) => verifyLedger(ex, platformId),
  };
}

export type LedgerService = ReturnType<typeof createLedgerService>;
