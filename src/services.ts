import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './core/clock.js';
import { JobRunner } from './core/jobs.js';
import type { Database } from './db/database.js';
import { createAccountService } from './modules/accounts/service.js';
import { createCustomerService } from './modules/customers/service.js';
import { createDiscoveryService } from './modules/discovery/service.js';
import { createExternalAccountService } from './modules/external-accounts/service.js';
import { createLedgerService } from './modules/ledger/service.js';
import { createPlatformService } from './modules/platform/service.js';
import { createRateService } from './modules/rates/service.js';
import { createTokenService } from './modules/tokens/service.js';

export interface CoreDeps {
  config: Config;
  database: Database;
  clock: Clock;
  log: Logger;
}

/** Builds every domain service and wires their dependencies: the one place that knows them all. */
export function createServices(deps: CoreDeps) {
  const { database, clock, log, config } = deps;
  const jobs = new JobRunner({ database, clock, log });
  const platforms = createPlatformService({
    database,
    clock,
    defaultUmaDomain: new URL(config.publicUrl).host,
    runDueJobs: (platformId) => jobs.runDue(platformId),
  });
  const tokens = createTokenService({ database, clock });
  const ledger = createLedgerService({ database, clock });
  // Accounts ask customers (built next) for active customer ids only at run time: no cycle at build time.
  const accounts = createAccountService({ database, clock, ledger, platforms, activeCustomerIds: (ex, id) => customers.activeIds(ex, id) });
  const customers = createCustomerService({ database, clock, accounts });
  const discovery = createDiscoveryService();
  const externalAccounts = createExternalAccountService({ database, clock, discovery, customers });
  customers.hooks.deleted.push((trx, platform, customerId) => externalAccounts.deleteCustomerAccounts(trx, platform, customerId));
  const rates = createRateService({ clock });

  return { jobs, platforms, tokens, ledger, accounts, customers, discovery, externalAccounts, rates };
}

export type Services = ReturnType<typeof createServices>;
