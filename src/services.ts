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
import { createWalletKeys } from './modules/wallets/crypto/secrets.js';
import { createWalletService } from './modules/wallets/service.js';
import { createWebhookService } from './modules/webhooks/service.js';
import { createSandboxService } from './modules/sandbox/service.js';
import { createTransferService } from './modules/transfers/service.js';
import { createIncomingPayments } from './modules/transactions/incoming.js';
import { createTransactionService } from './modules/transactions/service.js';
import { createQuoteService, payloadToSignOf } from './modules/quotes/service.js';

export interface CoreDeps {
  config: Config;
  database: Database;
  clock: Clock;
  log: Logger;
}

/** Builds every domain service and wires their dependencies: the one place that knows them all. */
export function createServices(deps: CoreDeps) {
  const { database, clock, log, config } = deps;
  // PGlite runs one statement at a time: a wide batch of jobs would queue ahead of requests.
  const jobs = new JobRunner({ database, clock, log, batchSize: database.kind === 'pglite' ? 4 : 20 });
  const walletKeys = createWalletKeys(config.walletEncryptionKey);
  const platforms = createPlatformService({
    database,
    clock,
    exportSignerPublicKey: walletKeys.exportSigner.publicKeyHex,
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
  const wallets = createWalletService({ database, clock, log, config, keys: walletKeys, accounts, customers });
  const webhooks = createWebhookService({ database, clock, log, platforms });
  const transactions = createTransactionService({ database, clock });
  const incomingPayments = createIncomingPayments({ database, clock, ledger, transactions, jobs, wakeWebhooks: () => webhooks.wake() });
  incomingPayments.registerJobs((id) => platforms.get(id));
  webhooks.onApproval('INCOMING_PAYMENT.PENDING', async (info) => {
    const platform = await platforms.get(info.event.platformId);
    if (platform) await incomingPayments.onWebhookAnswer(platform, info);
  });
  const sandbox = createSandboxService({ database, ledger, accounts });
  const transfers = createTransferService({ database, clock, log, ledger, transactions, accounts, externalAccounts, customers, platforms, jobs });
  transfers.registerJobs();

  const quotes = createQuoteService({
    database,
    clock,
    log,
    ledger,
    transactions,
    accounts,
    externalAccounts,
    customers,
    rates,
    quoteLifetimeMs: config.quoteLifetimeSeconds * 1000,
    // Embedded-wallet sources: the execute request must carry a session signature over the
    // quote's payloadToSign.
    executeAuthorizer: {
      authorize: async (ctx, quote, headers) => {
        await wallets.signedRetry.verifyPayload(
          { platform: ctx.platform, accountId: quote.debitAccountId! },
          payloadToSignOf(quote) ?? '',
          headers['service-wallet-signature'],
        );
      },
    },
  });
  quotes.registerJobs(jobs, (id) => platforms.get(id));

  return { jobs, platforms, webhooks, tokens, ledger, accounts, customers, discovery, externalAccounts, rates, wallets, transactions, incomingPayments, sandbox, transfers, quotes };
}

export type Services = ReturnType<typeof createServices>;
