import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the customers module work.
export interface CustomerServiceDeps {
  database: Database;
  clock: Clock;
}

export function createCustomerService(_deps: CustomerServiceDeps) {
  return {};
}
