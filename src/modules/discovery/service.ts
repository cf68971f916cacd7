import type { Clock } from '../../core/clock.js';
import type { Database } from '../../db/database.js';

// Placeholder: implemented in the discovery module work.
export interface DiscoveryServiceDeps {
  database: Database;
  clock: Clock;
}

export function createDiscoveryService(_deps: DiscoveryServiceDeps) {
  return {};
}
