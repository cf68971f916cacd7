import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import type { RawBuilder } from 'kysely';
import { balanceEventWrites, takeOutboxWrites, type BalanceEventRow } from '../../core/outbox.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import * as repo from './repository.js';
import type { RowLocks } from '../../db/write-batcher.js';
import { balanceLimitError, isOverBalanceLimit, lockAccounts, mapLedgerError, recordCall, recordLegs, resolvePending, transactionsWithPendingLegs, transfersOf, type BalanceChange, type Leg, type ResolveTarget } from './transfers.js';
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

/**
 * Who announces balance changes (the accounts module, with INTERNAL_ACCOUNT.BALANCE_UPDATED).
 * `prepare` builds the events of the accounts a ledger call may change with their balances left
 * open, so that they ride on the call's own statement; when it returns null, `changed` announces
 * them after the call, as it always does for resolved holds (whose accounts only the database
 * knows).
 */
export interface BalanceAnnouncer {
  prepare(ex: Executor, platform: PlatformRef, accountIds: string[]): Promise<BalanceEventRow[] | null>;
  /** Each change's `updatedAt` is the account row's: the event's time, which orders an account's events. */
  changed(trx: Trx, platform: PlatformRef, changes: BalanceChange[]): Promise<void>;
}

const accountsOf = (legs: Leg[]): string[] => [...new Set(legs.flatMap((l) => [l.debit, l.credit]))];

/**
 * The double-entry ledger: accounts with posted and pending (held) balances, immutable transfers,
 * and the invariant checks. Customer and platform accounts can never go below zero available:
 * the database refuses it (ledger_accounts_no_overdraft), whatever the concurrency.
 */
export function createLedgerService({ database, clock }: LedgerServiceDeps) {
  let announcer: BalanceAnnouncer | undefined;
  // System account id → its creation (shared by concurrent callers; kept once it succeeded).
  const ensuredSystemAccounts = new Map<string, Promise<void>>();

  async function notify(trx: Trx, platform: PlatformRef, changes: BalanceChange[]): Promise<BalanceChange[]> {
    if (changes.length > 0 && announcer) await announcer.changed(trx, platform, changes);
    return changes;
  }

  /**
   * One statement for the legs, their balance events and whatever events and jobs `trx` has
   * buffered so far (they commit together anyway): the transaction's final outbox write is
   * usually empty then, and skipped.
   */
  async function recordWithEvents(trx: Trx, platform: PlatformRef, legs: Leg[], transactionId: string | null): Promise<BalanceChange[]> {
    const now = clock.now(platform);
    const balanceEvents = announcer && legs.length > 0 ? await announcer.prepare(trx, platform, accountsOf(legs)) : null;
    if (!balanceEvents) return notify(trx, platform, await recordLegs(trx, platform.id, transactionId, legs, now));
    return recordLegs(trx, platform.id, transactionId, legs, now, { balanceEvents, writes: takeOutboxWrites(trx) });
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
    /** Sets who announces balance changes (one announcer: the accounts module). */
    announceBalancesWith(a: BalanceAnnouncer): void {
      announcer = a;
    },
    systemAccount,
    /** Opens accounts with zero balances, in the caller's transaction (one statement). */
    openAccounts: (trx: Trx, accounts: repo.NewLedgerAccount[], now: Date): Promise<void> => repo.insertAccounts(trx, accounts, now),
    /** Balances by account id (one query); ids that do not exist are absent from the map. */
    balances: (ex: Executor, ids: string[]): Promise<Map<string, repo.LedgerBalance>> => repo.selectBalances(ex, ids),
    /**
     * Records legs (posted or held) in the caller's transaction; throws INSUFFICIENT_FUNDS when a
     * customer or platform account would go below zero available.
     */
    record: (trx: Trx, platform: PlatformRef, legs: Leg[], transactionId: string | null = null) => recordWithEvents(trx, platform, legs, transactionId),
    /**
     * `record` for the caller's one statement: `call` selects the new balances (a clause named
     * `balances`, which the statement's final query must read, since a SELECT runs only when
     * read), `writes` insert the balance events. The transaction id may be an SQL expression
     * over an earlier clause, so that the call runs only when that clause returned its row. Null
     * when the balance events cannot be prepared (use `record`). Map errors with `explainError`.
     */
    async recordWithin(ex: Executor, platform: PlatformRef, legs: Leg[], transactionId: RawBuilder<string>) {
      const balanceEvents = announcer ? await announcer.prepare(ex, platform, accountsOf(legs)) : null;
      if (!balanceEvents || legs.length === 0) return null;
      const call = recordCall(platform.id, transactionId, legs, clock.now(platform));
      return { call, writes: balanceEventWrites(balanceEvents) };
    },
    explainError: mapLedgerError,
    isOverBalanceLimit,
    balanceLimitError,
    /** The balance rows recording `legs` locks, for a batch that takes them first (see `RowLocks`). */
    locksOf: (legs: Leg[]): RowLocks => ({ keys: accountsOf(legs), statement: lockAccounts }),
    /**
     * Posts or voids a transaction's pending legs (or the given transfers); idempotent. With
     * `target.accounts`, the call carries their balance events and what `trx` has buffered.
     */
    async resolve(trx: Trx, platform: PlatformRef, target: ResolveTarget, outcome: 'POST' | 'VOID'): Promise<BalanceChange[]> {
      const now = clock.now(platform);
      const balanceEvents = announcer && target.accounts?.length ? await announcer.prepare(trx, platform, [...new Set(target.accounts)]) : null;
      if (!balanceEvents) return notify(trx, platform, await resolvePending(trx, platform.id, target, outcome, now));
      const changes = await resolvePending(trx, platform.id, target, outcome, now, { balanceEvents, writes: takeOutboxWrites(trx) });
      const announced = new Set(balanceEvents.map((e) => e.account_id));
      await notify(trx, platform, changes.filter((c) => !announced.has(c.accountId)));
      return changes;
    },
    /**
     * Whether posting `legs` now keeps every balance they credit within the balance limit. Not a
     * lock: a credit that commits meanwhile makes `record` refuse (AMOUNT_OUT_OF_RANGE), and the
     * caller's retry then sees it.
     */
    fitsUnderLimit(ex: Executor, legs: Leg[]): Promise<boolean> {
      const deltas = new Map<string, number>();
      for (const leg of legs) {
        deltas.set(leg.credit, (deltas.get(leg.credit) ?? 0) + leg.amount);
        deltas.set(leg.debit, (deltas.get(leg.debit) ?? 0) - leg.amount);
      }
      return repo.fitsUnderLimit(ex, deltas);
    },
    transfersOf,
    transactionsWithPendingLegs,
    verify: (ex: Executor, platformId?: string, progress?: (check: string) => void) => verifyLedger(ex, platformId, progress),
  };
}

export type LedgerService = ReturnType<typeof createLedgerService>;
