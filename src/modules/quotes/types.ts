import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import type { Database, Executor, Trx } from '../../db/database.js';
import type { AccountService } from '../accounts/service.js';
import type { CustomerService } from '../customers/service.js';
import type { ExternalAccountService } from '../external-accounts/service.js';
import type { LedgerService } from '../ledger/service.js';
import type { Platform } from '../platform/service.js';
import type { RailAdapter, RailPlan } from '../rails/rail.js';
import type { RateService } from '../rates/service.js';
import type { TransactionDestination } from '../transactions/schemas.js';
import type { TransactionService } from '../transactions/service.js';
import type { Delivery, LookupRecord, QuoteRecord } from './repository.js';
import type { QuoteDestination, QuoteDestinationInput, RequiredPayerField } from './schemas.js';
import type { Logger } from 'pino';
import type { RowChecks } from '../../core/row-checks.js';
import type { SenderGate } from '../compliance/sender-gate.js';

export type QuoteContext = ServiceContext<Platform>;

/** Request headers execute looks at (lower-case names). */
export type ExecuteHeaders = Record<string, string | undefined>;

/**
 * Authorizes executing a quote whose source is an EMBEDDED_WALLET: checks the
 * Service-Wallet-Signature over the quote's payloadToSign (the wallets module supplies it).
 */
export interface ExecuteAuthorizer {
  /** Returns the check to repeat in the claim's transaction (the signer must still be allowed to sign). */
  authorize(ctx: QuoteContext, quote: QuoteRecord, headers: ExecuteHeaders): Promise<(trx: Trx) => Promise<void>>;
}


/** The receiving side of a quote, resolved and checked. */
export interface ResolvedDestination {
  /** As the quote shows it. */
  view: QuoteDestination;
  /** As the transaction shows it. */
  transactionDestination: TransactionDestination;
  currency: string;
  delivery: Delivery;
  /** Sender information the receiver asks for (mandatory ones are enforced). */
  requiredPayerDataFields: RequiredPayerField[];
  /** What is known about the recipient. */
  counterpartyInformation: Record<string, unknown> | null;
  /** The lookup the quote used, if any. */
  lookup: LookupRecord | null;
  /** What the receiver accepts, in the smallest receiving unit, when it says (UMA lookups). */
  receivingLimits?: { min: number; max: number };
}

export interface DestinationRequest {
  ctx: QuoteContext;
  /** Where reads go (the creating transaction, or the database). */
  ex: Executor;
  /** When set, rows may come from memory; the quote's write verifies them (see RowChecks). */
  checks?: RowChecks;
  destination: QuoteDestinationInput;
  lookupId: string | undefined;
  /** Reads a lookup of this platform (undefined when unknown). */
  findLookup(id: string): Promise<LookupRecord | undefined>;
}

/**
 * Resolves one `destinationType`. ACCOUNT is built in; UMA_ADDRESS plugs in here when the UMA
 * module exists (it will resolve its lookups and deliver through UMA settlement).
 */
export interface QuoteDestinationHandler {
  readonly destinationType: QuoteDestinationInput['destinationType'];
  resolve(request: DestinationRequest): Promise<ResolvedDestination>;
  /**
   * Delivers an executed quote whose delivery kind this handler owns (UMA). Called outside any
   * database transaction after the claim committed, again by the recovery job, and by
   * `resumeDelivery`; so it must be idempotent per quote. Returns what happened, as a rail plan,
   * or null while the outcome is not known yet (the handler then calls `resumeDelivery` later).
   * Expected failures are FAILED events, never exceptions; an exception leaves the payment
   * PROCESSING for the recovery job.
   */
  deliver?(platform: Platform, quote: QuoteRecord): Promise<RailPlan | null>;
}

/** What other modules check or do around quotes (registered after the service is made). */
export interface QuoteHooks {
  /** Run on every execute request before the claim, once the quote is known to be executable; may refuse it. */
  beforeExecute: Array<(ctx: QuoteContext, quote: QuoteRecord) => Promise<void>>;
}

export interface QuoteServiceDeps {
  database: Database;
  clock: Clock;
  log?: Logger;
  ledger: LedgerService;
  transactions: TransactionService;
  accounts: Pick<AccountService, 'getAccount'>;
  externalAccounts: Pick<ExternalAccountService, 'findExternalAccount' | 'liveCondition'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
  rates: Pick<RateService, 'price' | 'estimateRate'>;
  /** How long a quote can be executed (config.quoteLifetimeSeconds). */
  quoteLifetimeMs: number;
  /** Default: the sandbox rail on sandbox platforms, none on production. */
  railFor?: (platform: Platform) => RailAdapter;
  executeAuthorizer: ExecuteAuthorizer;
  /** The send rule: unverified customers of non-regulated platforms cannot send (403 USER_NOT_READY). */
  senderGate: SenderGate;
  /** Extra destination handlers (UMA); ACCOUNT is built in. */
  destinationHandlers?: QuoteDestinationHandler[];
}
