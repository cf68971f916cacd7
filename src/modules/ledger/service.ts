import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the ledger module work.
export interface LedgerServiceDeps {
  database: Database;
  clock: Clock;
}

export function createLedgerService(_deps: LedgerServiceDeps) {
  return {};
}
