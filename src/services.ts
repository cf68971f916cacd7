import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './core/clock.js';
import { JobRunner } from './core/jobs.js';
import type { Database } from './db/database.js';
import { createAccountService } from './modules/accounts/service.js';
import { createCryptoService } from './modules/crypto/service.js';
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
import { createUmaService } from './modules/uma/service.js';
import { API_PREFIX } from './http/app.js';
import { createSenderGate } from './modules/compliance/sender-gate.js';
import { createComplianceService } from './modules/compliance/service.js';
import { createCustomerImport } from './modules/customer-import/service.js';
import { createInvitationService } from './modules/invitations/service.js';
import { createAgentService } from './modules/agents/service.js';

export interface CoreDeps {
  config: Config;
  database: Database;
  clock: Clock;
  log: Logger;
}

/** Builds every domain service and wires their dependencies: the one place that knows them all. */
export function createServices(deps: CoreDeps) {
  const { database, clock, log, config } = deps;
  // PGlite runs one statement at a time: a wide batch of jobs would queue ahead of requests, so
  // its rounds start narrow (they grow only while a backlog lasts, see JobRunner.runDue).
  // Jobs a clock advance in another process made due run on the clock as advanced (platforms is built next).
  const jobs = new JobRunner({ database, clock, log, batchSize: database.kind === 'pglite' ? 4 : 20, clockSeen: (id, ms) => platforms.clockSeen(id, ms) });
  const walletKeys = createWalletKeys(config.walletEncryptionKey);
  const platforms = createPlatformService({
    database,
    clock,
    exportSignerPublicKey: walletKeys.exportSigner.publicKeyHex,
    defaultUmaDomain: new URL(config.publicUrl).host,
    runDueJobs: (platformId) => jobs.runDueSettled(platformId),
    privateTargets: { webhookEndpoints: config.webhookAllowPrivateEndpoints, oidcIssuers: config.oidcAllowPrivateIssuers },
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
  const webhooks = createWebhookService({
    database,
    clock,
    log,
    platforms,
    settings: {
      concurrency: config.webhookConcurrency,
      perPlatformConcurrency: config.webhookPlatformConcurrency,
      allowPrivateEndpoints: config.webhookAllowPrivateEndpoints,
    },
  });
  const transactions = createTransactionService({ database, clock });
  const incomingPayments = createIncomingPayments({ database, clock, ledger, transactions, jobs, wakeWebhooks: () => webhooks.wake(), webhookEndpointOf: async (trx, id) => (await platforms.read(trx, id))?.webhookEndpoint ?? null });
  incomingPayments.registerJobs((id) => platforms.get(id));
  webhooks.onApproval('INCOMING_PAYMENT.PENDING', async (info) => {
    const platform = await platforms.get(info.event.platformId);
    if (platform) await incomingPayments.onWebhookAnswer(platform, info);
  });
  const sandbox = createSandboxService({ database, ledger, accounts });
  // The send rule (unverified customers of non-regulated platforms cannot send), for quotes and transfers.
  const senderGate = createSenderGate(customers);
  const transfers = createTransferService({ database, clock, log, ledger, transactions, accounts, externalAccounts, customers, platforms, jobs, senderGate });
  transfers.registerJobs();
  // UMA: the quotes service (built next) takes its destination handler and gives it lookups and delivery resumption.
  const uma = createUmaService({
    database,
    clock,
    log,
    sandboxUmaDomain: config.sandboxUmaDomain,
    allowPrivateCounterparties: config.umaAllowPrivateCounterparties,
    counterpartyTimeoutMs: config.umaCounterpartyTimeoutMs,
    counterpartyConcurrency: config.umaCounterpartyConcurrency,
    sealer: walletKeys,
    jobs,
    platforms,
    customers,
    accounts,
    externalAccounts,
    rates,
    incomingPayments,
    transactions,
    transfers: () => transfers,
    quotes: () => quotes,
  });
  uma.registerJobs();
  customers.hooks.approved.push(uma.resumeForwards);
  incomingPayments.hooks.completed.push(uma.forwardCompleted);

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
    senderGate,
    quoteLifetimeMs: config.quoteLifetimeSeconds * 1000,
    destinationHandlers: [uma.destinationHandler],
    // Embedded-wallet sources: the execute request must carry a session signature over the
    // quote's payloadToSign.
    executeAuthorizer: {
      authorize: async (ctx, quote, headers) => {
        const signer = await wallets.signedRetry.verifyPayload(
          { platform: ctx.platform, accountId: quote.debitAccountId! },
          payloadToSignOf(quote) ?? '',
          headers['service-wallet-signature'],
        );
        // In the claim's transaction: the session that signed must still be active.
        return (trx) => wallets.signedRetry.confirmSigner(trx, ctx.platform, signer);
      },
    },
  });
  quotes.registerJobs(jobs, (id) => platforms.get(id));

  const wakeWebhooks = () => webhooks.wake();
  const invitations = createInvitationService({ database, clock, customers, platforms, urlBase: `${config.publicUrl}${API_PREFIX}/invitations/`, wakeWebhooks });
  invitations.registerJobs(jobs);
  customers.hooks.deleted.push(invitations.cancelCustomerInvitations);
  const compliance = createComplianceService({
    database,
    clock,
    log,
    customers,
    platforms,
    documentsDir: config.documentsDir,
    documentMaxBytes: config.documentMaxBytes,
    documentQuota: { perCustomer: config.documentsPerCustomer, platformBytes: config.documentStoragePerPlatform },
    kycLinkBase: config.kycLinkUrl ?? `${config.publicUrl}/kyc`,
    wakeWebhooks,
  });
  customers.hooks.beneficialOwners = compliance.owners.viewsByCustomer;
  const customerImport = createCustomerImport({ database, clock, log, customers, platforms, maxBytes: config.bulkImportMaxBytes, maxRows: config.bulkImportMaxRows, wakeWebhooks });
  customerImport.registerJobs(jobs);

  const agents = createAgentService({ database, clock, platforms, customers, accounts, externalAccounts, rates, quotes, transfers, transactions });
  transactions.hooks.transitioned.push(agents.transactionHook);
  quotes.hooks.beforeExecute.push(agents.refuseHeldQuote);
  customers.hooks.deleted.push(agents.deleteCustomerAgents);

  const crypto = createCryptoService({ database, accounts, rates });
  return { jobs, platforms, webhooks, tokens, ledger, accounts, customers, discovery, externalAccounts, rates, wallets, transactions, incomingPayments, sandbox, transfers, quotes, agents, invitations, compliance, customerImport, uma, crypto };
}

export type Services = ReturnType<typeof createServices>;
