import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the rates module work.
export interface RateServiceDeps {
  database: Database;
  clock: Clock;
}

export function createRateService(_deps: RateServiceDeps) {
  return {};
}
