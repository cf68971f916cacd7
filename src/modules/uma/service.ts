import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import type { JobRunner } from '../../core/jobs.js';
import type { Database, Executor } from '../../db/database.js';
import type { AccountService } from '../accounts/service.js';
import type { CustomerService } from '../customers/service.js';
import type { ExternalAccountService } from '../external-accounts/service.js';
import type { PlatformService } from '../platform/service.js';
import type { LookupRecord } from '../quotes/repository.js';
import type { RateService } from '../rates/service.js';
import type { IncomingPayments } from '../transactions/incoming.js';
import type { TransactionService } from '../transactions/service.js';
import type { TransferService } from '../transfers/service.js';
import { createAuthenticator } from './authentication.js';
import { createCallSlots, createKeyDirectory, type CallPurpose } from './counterparty.js';
import { createDeposits } from './deposit.js';
import { createUmaDestinations } from './destinations.js';
import { createUmaKeys, type Sealer } from './keys.js';
import { createLnurlpHandlers } from './lnurlp.js';
import { createUmaLookups } from './lookup.js';
import { createUmaPayer } from './payer.js';
import { createProviderBook } from './providers.js';
import { createDomainDirectory } from './receiver.js';
import { createSandboxReceive } from './sandbox-receive.js';
import { createSettleHandler } from './settle.js';
import { createSettlement } from './settlement.js';

export interface UmaServiceDeps {
  database: Database;
  clock: Clock;
  log?: Logger;
  /** Domain of the sandbox's simulated counterparties (config.sandboxUmaDomain). */
  sandboxUmaDomain: string;
  /** Whether counterparty calls may reach loopback and private addresses (development only). */
  allowPrivateCounterparties: boolean;
  /** Longest one counterparty call may take, its answer included (config.umaCounterpartyTimeoutMs). */
  counterpartyTimeoutMs: number;
  /** Most counterparty calls in flight in the process (config.umaCounterpartyConcurrency). */
  counterpartyConcurrency: number;
  /** Seals the platforms' UMA private keys at rest. */
  sealer: Sealer;
  jobs: JobRunner;
  platforms: Pick<PlatformService, 'get' | 'list'>;
  customers: Pick<CustomerService, 'requireCustomer' | 'findActive'>;
  accounts: Pick<AccountService, 'findCustomerAccount'>;
  externalAccounts: Pick<ExternalAccountService, 'findDefaultUmaDepositAccount'>;
  rates: Pick<RateService, 'getRates' | 'estimateRate'>;
  incomingPayments: Pick<IncomingPayments, 'receive' | 'receiveWithin'>;
  transactions: Pick<TransactionService, 'find' | 'present'>;
  transfers: () => Pick<TransferService, 'transferOut'>;
  /** The quotes service, built after this one (it takes this module's destination handler). */
  quotes: () => {
    recordLookup(ex: Executor, lookup: LookupRecord): Promise<void>;
    resumeDelivery(platform: PlatformRef, quoteId: string): Promise<void>;
  };
}

/**
 * UMA (docs/uma.md): both sides of the protocol for every platform — receiving at
 * `/.well-known/lnurlp/*` and `/uma/*` on the platform's UMA domain, sending through quotes to
 * UMA_ADDRESS destinations — plus the sandbox counterparty and the providers list.
 */
export function createUmaService(deps: UmaServiceDeps) {
  const { database, clock, log } = deps;
  const keys = createUmaKeys({ database, clock, sealer: deps.sealer });
  const slots = createCallSlots(deps.counterpartyConcurrency, { onRefused: refusalLogger(deps.counterpartyConcurrency, clock, log) });
  const network = { allowPrivate: deps.allowPrivateCounterparties, timeoutMs: deps.counterpartyTimeoutMs, slots };
  const directory = createKeyDirectory(clock, network);
  const auth = createAuthenticator({ database, clock, keys: directory });
  const providers = createProviderBook({ database, clock, log, sandboxDomain: deps.sandboxUmaDomain });
  const platformFor = createDomainDirectory(deps.platforms, clock);
  const receiverDeps = { database, clock, platforms: deps.platforms, customers: deps.customers, accounts: deps.accounts, externalAccounts: deps.externalAccounts, rates: deps.rates };
  const deposits = createDeposits({ ...receiverDeps, log, jobs: deps.jobs, incomingPayments: deps.incomingPayments, transactions: deps.transactions, transfers: deps.transfers });
  const lnurlp = createLnurlpHandlers({ ...receiverDeps, keys, auth, providers, platformFor });
  const settle = createSettleHandler({ ...receiverDeps, keys, auth, providers, platformFor, transactions: deps.transactions, deposits });
  const settlement = createSettlement({ database, clock, log, network, jobs: deps.jobs, keys, auth, platforms: deps.platforms, resumeDelivery: (p, id) => deps.quotes().resumeDelivery(p, id) });
  const payer = createUmaPayer({ database, clock, log, network, keys, directory, auth, customers: deps.customers, settlement });
  const lookups = createUmaLookups({
    database,
    clock,
    network,
    sandboxDomain: deps.sandboxUmaDomain,
    keys,
    auth,
    providers,
    customers: deps.customers,
    rates: deps.rates,
    recordLookup: (ex, lookup) => deps.quotes().recordLookup(ex, lookup),
  });
  const sandbox = createSandboxReceive({ ...receiverDeps, transactions: deps.transactions, deposits, sandboxDomain: deps.sandboxUmaDomain });

  return {
    /** Plugs UMA_ADDRESS destinations into quotes. */
    destinationHandler: createUmaDestinations({ clock, payer }),
    lookupUma: lookups.lookupUma,
    sandboxReceive: sandbox.receive,
    listProviders: providers.list,
    /** The protocol endpoints other VASPs call (served outside the API prefix). */
    protocol: {
      pubkey: async (host: string | undefined) => keys.pubKeyResponse(await platformFor(host)),
      lnurlp: lnurlp.lnurlp,
      payreq: lnurlp.payreq,
      settle: settle.settle,
    },
    /** For the customers module: a verified customer's held-back deposit forwards run again. */
    resumeForwards: deposits.resumeForwards,
    /** For incoming payments: a completed UMA payment's forward to the deposit account is due. */
    forwardCompleted: deposits.forwardCompleted,
    registerJobs(): void {
      deposits.registerJobs();
      settlement.registerJobs();
    },
  };
}

export type UmaService = ReturnType<typeof createUmaService>;

/** Calls refused for want of a slot are logged at most once a minute, with how many since the last line (a flood would fill the log). */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

function refusalLogger(max: number, clock: Clock, log: Logger | undefined): (purpose: CallPurpose) => void {
  let loggedAtMs = -Infinity;
  const counts: Record<CallPurpose, number> = { unsolicited: 0, own: 0 };
  return (purpose) => {
    counts[purpose]++;
    const nowMs = clock.realNowMs();
    if (nowMs - loggedAtMs < REFUSAL_LOG_INTERVAL_MS) return;
    log?.warn({ refused: { ...counts }, max }, 'UMA counterparty calls refused: UMA_COUNTERPARTY_CONCURRENCY calls (half of them for unsolicited messages) are in flight');
    loggedAtMs = nowMs;
    counts.unsolicited = counts.own = 0;
  };
}
