import type { Clock } from '../../core/clock.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import * as repo from './repository.js';

export type { LedgerAccountKind, LedgerBalance, NewLedgerAccount } from './repository.js';

export interface LedgerServiceDeps {
  database: Database;
  clock: Clock;
}

/**
 * The double-entry ledger. For now it opens accounts and reads balances; transfers and holds
 * come with the money-movement work.
 */
export function createLedgerService(_deps: LedgerServiceDeps) {
  return {
    /** Opens accounts with zero balances, in the caller's transaction (one statement). */
    openAccounts: (trx: Trx, accounts: repo.NewLedgerAccount[], now: Date): Promise<void> => repo.insertAccounts(trx, accounts, now),
    /** Balances by account id (one query); ids that do not exist are absent from the map. */
    balances: (ex: Executor, ids: string[]): Promise<Map<string, repo.LedgerBalance>> => repo.selectBalances(ex, ids),
  };
}

export type LedgerService = ReturnType<typeof createLedgerService>;
