import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the accounts module work.
export interface AccountServiceDeps {
  database: Database;
  clock: Clock;
}

export function createAccountService(_deps: AccountServiceDeps) {
  return {};
}
