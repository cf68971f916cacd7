import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the external-accounts module work.
export interface ExternalAccountServiceDeps {
  database: Database;
  clock: Clock;
}

export function createExternalAccountService(_deps: ExternalAccountServiceDeps) {
  return {};
}
