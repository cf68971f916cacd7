import { sql } from 'kysely';
import { commitWrites } from '../../core/context.js';
import { invalidInput, ServiceError, type FieldError } from '../../core/errors.js';
import { jobRows } from '../../core/jobs.js';
import { outboxWrites } from '../../core/outbox.js';
import { newId } from '../../core/ids.js';
import type { Executor } from '../../db/database.js';
import { withRowChecks, type RowChecks } from '../../core/row-checks.js';
import { newFundingReference } from '../accounts/funding.js';
import type { Customer } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import type { CurrencyConfigInput } from '../platform/schemas.js';
import type { PricedQuote } from '../rates/pricing.js';
import type { TransactionSource } from '../transactions/schemas.js';
import type { NewTransaction } from '../transactions/service.js';
import type { QuoteExecution } from './execute.js';
import { createExpirySchedule } from './expiry.js';
import { checkFundingNetwork, realtimeFundingInstructions, walletPayloadToSign, walletSigningInstructions } from './funding.js';
import { quoteAccounts } from './legs.js';
import { presentQuote } from './present.js';
import * as repo from './repository.js';
import type { QuoteRecord } from './repository.js';
import type { QuoteRequest, QuoteSource, QuoteSourceInput, QuoteView, RequiredPayerField } from './schemas.js';
import type { QuoteContext, QuoteDestinationHandler, QuoteServiceDeps, ResolvedDestination } from './types.js';

interface ResolvedSource {
  view: QuoteSource;
  transactionSource: TransactionSource;
  currency: string;
  /** Which request field names the currency, for error details. */
  currencyField: string;
  debitAccountId: string | null;
  debitAccountType: string | null;
  customer: Customer | null;
}

function blank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** What the sender's customer record already tells the receiver. */
function customerInfo(customer: Customer | null): Record<string, unknown> {
  if (!customer) return {};
  const entries: Array<[string, unknown]> = [
    ['FULL_NAME', customer.fullName ?? customer.businessInfo?.legalName],
    ['BIRTH_DATE', customer.birthDate],
    ['NATIONALITY', customer.nationality],
    ['EMAIL', customer.email],
    ['POSTAL_ADDRESS', customer.address],
  ];
  return Object.fromEntries(entries.filter(([, v]) => !blank(v)));
}

/**
 * Every mandatory field the receiver asks for must be known: given in senderCustomerInfo, on the
 * sending customer's record, or (PURPOSE_OF_PAYMENT) as purposeOfPayment.
 */
function checkPayerData(required: RequiredPayerField[], input: QuoteRequest, customer: Customer | null): void {
  const known: Record<string, unknown> = {
    ...customerInfo(customer),
    ...(input.purposeOfPayment && { PURPOSE_OF_PAYMENT: input.purposeOfPayment }),
    ...input.senderCustomerInfo,
  };
  const missing = required.filter((f) => f.mandatory && blank(known[f.name])).map((f) => f.name);
  if (missing.length === 0) return;
  throw new ServiceError('MISSING_MANDATORY_USER_INFO', `the receiver requires ${missing.join(', ')} about the sender in senderCustomerInfo`, {
    details: {
      missingFields: missing,
      errors: missing.map((name) => ({ field: `senderCustomerInfo.${name}`, constraint: 'required', message: 'is required by the receiver' })),
    },
  });
}

function configOf(platform: Platform, code: string): CurrencyConfigInput | undefined {
  return platform.supportedCurrencies.find((c) => c.currencyCode === code);
}

/** Both currencies enabled for the platform, and outgoing payments enabled for the sending one. */
function checkCurrencies(platform: Platform, source: ResolvedSource, destination: ResolvedDestination, destinationField: string) {
  const problems: FieldError[] = [];
  const sending = configOf(platform, source.currency);
  const receiving = configOf(platform, destination.currency);
  const unsupported = (code: string) => `${code} is not enabled for this platform (see supportedCurrencies in /config)`;
  if (!sending) problems.push({ field: source.currencyField, constraint: 'supported', message: unsupported(source.currency) });
  else if (!sending.enabledTransactionTypes.includes('OUTGOING')) {
    problems.push({ field: source.currencyField, constraint: 'direction', message: `outgoing payments are not enabled for ${source.currency}` });
  }
  if (!receiving) problems.push({ field: destinationField, constraint: 'supported', message: unsupported(destination.currency) });
  if (problems.length > 0 || !sending || !receiving) throw new ServiceError('INVALID_CURRENCY', problems[0].message, { details: { errors: problems } });
  return { sending, receiving };
}

/** The platform's per-currency limits on what is sent and what is received. */
function checkLimits(priced: PricedQuote, limits: { sending: CurrencyConfigInput; receiving: CurrencyConfigInput }): void {
  const check = (side: string, amount: number, config: CurrencyConfigInput) => {
    const error = (constraint: string, message: string, bound: Record<string, number>) =>
      new ServiceError('AMOUNT_OUT_OF_RANGE', message, {
        details: { ...bound, currency: config.currencyCode, errors: [{ field: 'lockedCurrencyAmount', constraint, message }] },
      });
    if (amount < config.minAmount) {
      throw error('minimum', `the ${side} amount ${amount} is below this platform's minimum of ${config.minAmount} ${config.currencyCode}`, { minimumAmount: config.minAmount });
    }
    if (amount > config.maxAmount) {
      throw error('maximum', `the ${side} amount ${amount} is above this platform's maximum of ${config.maxAmount} ${config.currencyCode}`, { maximumAmount: config.maxAmount });
    }
  };
  check('sending', priced.totalSendingAmount, limits.sending);
  check('receiving', priced.totalReceivingAmount, limits.receiving);
}

/** What the receiver itself accepts (UMA receivers state it in their lookup), on the receiving amount. */
function checkReceiverLimits(priced: PricedQuote, destination: ResolvedDestination): void {
  const limits = destination.receivingLimits;
  if (!limits) return;
  const amount = priced.totalReceivingAmount;
  if (amount >= limits.min && amount <= limits.max) return;
  const [constraint, bound] = amount < limits.min ? ['minimum', limits.min] : ['maximum', limits.max];
  const message = `the receiver accepts ${limits.min} to ${limits.max} ${destination.currency} (smallest unit); this quote delivers ${amount}`;
  throw new ServiceError('AMOUNT_OUT_OF_RANGE', message, {
    details: { [`${constraint}Amount`]: bound, currency: destination.currency, errors: [{ field: 'lockedCurrencyAmount', constraint, message }] },
  });
}

/** immediatelyExecute cannot be used when the source is an embedded wallet: its owner must sign the quote first. */
export function checkImmediateSource(input: Pick<QuoteRequest, 'immediatelyExecute'>, sourceAccountType: string | null): void {
  if (input.immediatelyExecute && sourceAccountType === 'EMBEDDED_WALLET') {
    throw invalidInput('immediatelyExecute', 'an EMBEDDED_WALLET source must sign its payloadToSign: create the quote, then execute it with Service-Wallet-Signature', 'source');
  }
}

export function createQuoteCreation(deps: QuoteServiceDeps, execution: QuoteExecution, handlers: Map<string, QuoteDestinationHandler>) {
  const { database, clock, customers, accounts, rates, transactions, ledger } = deps;
  const expiries = createExpirySchedule();

  const customerOf = (ctx: QuoteContext, ex: Executor, id: string | null, checks?: RowChecks) =>
    id ? customers.requireCustomer(ex, ctx.platform.id, id, checks) : Promise.resolve(null);

  async function accountSource(ctx: QuoteContext, ex: Executor, input: Extract<QuoteSourceInput, { sourceType: 'ACCOUNT' }>, checks?: RowChecks): Promise<ResolvedSource> {
    if (input.accountId.startsWith('ExternalAccount:')) {
      throw invalidInput('source.accountId', 'quotes are paid from an internal account or by REALTIME_FUNDING, not from an external account', 'internal');
    }
    const [account, named] = await Promise.all([
      accounts.getAccount(ex, ctx.platform.id, input.accountId).catch((error: unknown) => {
        throw error instanceof ServiceError && error.code === 'NOT_FOUND' ? new ServiceError('NOT_FOUND', 'source account not found') : error;
      }),
      customerOf(ctx, ex, input.customerId ?? null, checks),
    ]);
    if (input.customerId && account.customerId && input.customerId !== account.customerId) {
      throw invalidInput('source.customerId', 'is not the owner of source.accountId', 'owner');
    }
    const customerId = input.customerId ?? account.customerId;
    const shown = input.customerId ?? (ctx.agentId ? customerId : null);
    return {
      view: { sourceType: 'ACCOUNT', accountId: account.id, ...(shown && { customerId: shown }) },
      transactionSource: { sourceType: 'ACCOUNT', accountId: account.id, currency: account.currency },
      currency: account.currency,
      currencyField: 'source.accountId',
      debitAccountId: account.id,
      debitAccountType: account.type,
      customer: named ?? (await customerOf(ctx, ex, customerId, checks)),
    };
  }

  async function realtimeSource(ctx: QuoteContext, ex: Executor, input: Extract<QuoteSourceInput, { sourceType: 'REALTIME_FUNDING' }>, checks?: RowChecks): Promise<ResolvedSource> {
    if (ctx.platform.mode !== 'SANDBOX') {
      throw new ServiceError('NOT_IMPLEMENTED', 'real-time funding needs a deposit rail, and none is configured for this platform');
    }
    checkFundingNetwork(input.currency, input.cryptoNetwork);
    const customer = await customerOf(ctx, ex, input.customerId ?? null, checks);
    const customerId = input.customerId ? { customerId: input.customerId } : {};
    return {
      view: { sourceType: 'REALTIME_FUNDING', ...customerId, currency: input.currency, ...(input.cryptoNetwork && { cryptoNetwork: input.cryptoNetwork }) },
      transactionSource: { sourceType: 'REALTIME_FUNDING', ...customerId, currency: input.currency },
      currency: input.currency,
      currencyField: 'source.currency',
      debitAccountId: null,
      debitAccountType: null,
      customer,
    };
  }

  function resolveDestination(ctx: QuoteContext, ex: Executor, input: QuoteRequest, checks?: RowChecks): Promise<ResolvedDestination> {
    const handler = handlers.get(input.destination.destinationType);
    if (!handler) throw invalidInput('destination.destinationType', `${input.destination.destinationType} destinations are not supported`, 'enum');
    return handler.resolve({
      ctx,
      ex,
      checks,
      destination: input.destination,
      lookupId: input.lookupId,
      findLookup: (id) => repo.findLookup(ex, ctx.platform.id, id),
    });
  }

  function checkCombination(input: QuoteRequest, source: ResolvedSource, destination: ResolvedDestination): void {
    if (destination.delivery.kind === 'INTERNAL' && destination.delivery.accountId === source.debitAccountId) {
      throw new ServiceError('SELF_PAYMENT', 'the source and destination are the same account');
    }
    checkImmediateSource(input, source.debitAccountType);
    const lookup = destination.lookup;
    if (lookup?.customerId && lookup.customerId !== source.customer?.id) {
      throw invalidInput('lookupId', 'this lookup was made for a different sending customer', 'mismatch');
    }
    // An UMA lookup's sender address is signed for: one that is no customer's names the platform itself.
    if (lookup?.kind === 'UMA' && !lookup.customerId && source.customer) {
      throw invalidInput('lookupId', "this lookup was made with the platform's own sender address, for payments from the platform's accounts", 'mismatch');
    }
  }

  function buildQuote(ctx: QuoteContext, input: QuoteRequest, source: ResolvedSource, destination: ResolvedDestination, priced: PricedQuote): QuoteRecord {
    const now = clock.now(ctx.platform);
    const realtime = source.view.sourceType === 'REALTIME_FUNDING';
    const q: QuoteRecord = {
      id: newId('Quote'),
      platformId: ctx.platform.id,
      status: 'PENDING',
      source: source.view,
      destination: destination.view,
      sendingCurrency: source.currency,
      receivingCurrency: destination.currency,
      totalSendingAmount: priced.totalSendingAmount,
      totalReceivingAmount: priced.totalReceivingAmount,
      feesIncluded: priced.feesIncluded,
      exchangeRate: priced.exchangeRate,
      rateDetails: priced.rateDetails,
      paymentInstructions: null,
      counterpartyInformation: destination.counterpartyInformation,
      senderCustomerInfo: (input.senderCustomerInfo as Record<string, unknown> | undefined) ?? null,
      lookupId: input.lookupId ?? null,
      purposeOfPayment: input.purposeOfPayment ?? null,
      description: input.description ?? null,
      customerId: source.customer?.id ?? null,
      debitAccountId: source.debitAccountId,
      debitAccountType: source.debitAccountType,
      delivery: destination.delivery,
      fundingReference: realtime ? newFundingReference() : null,
      transactionId: newId('Transaction'),
      agentId: ctx.agentId ?? null,
      expiresAt: new Date(now.getTime() + deps.quoteLifetimeMs),
      executedAt: null,
      railPlan: null,
      railInitiatedAt: null,
      nextStep: 0,
      createdAt: now,
      updatedAt: now,
    };
    if (realtime) q.paymentInstructions = realtimeFundingInstructions({ ...q, fundingReference: q.fundingReference!, cryptoNetwork: q.source.sourceType === 'REALTIME_FUNDING' ? q.source.cryptoNetwork : undefined });
    else if (q.debitAccountType === 'EMBEDDED_WALLET') q.paymentInstructions = walletSigningInstructions(walletPayloadToSign(q));
    return q;
  }

  function transactionDraft(q: QuoteRecord, source: ResolvedSource, destination: ResolvedDestination): NewTransaction {
    return {
      id: q.transactionId,
      type: 'OUTGOING',
      status: 'PENDING',
      customerId: source.customer?.id ?? null,
      platformCustomerId: source.customer?.platformCustomerId ?? null,
      source: source.transactionSource,
      destination: destination.transactionDestination,
      sentAmount: q.totalSendingAmount,
      sentCurrency: q.sendingCurrency,
      receivedAmount: q.totalReceivingAmount,
      receivedCurrency: q.receivingCurrency,
      exchangeRate: q.exchangeRate,
      fees: q.feesIncluded,
      quoteId: q.id,
      description: q.description,
      counterpartyInformation: q.counterpartyInformation,
      rateDetails: q.rateDetails,
      paymentInstructions: q.source.sourceType === 'REALTIME_FUNDING' ? q.paymentInstructions : null,
      agentId: q.agentId,
    };
  }

  /**
   * Resolves, checks and prices the request: everything but the writes (reads through `ex`; with
   * `checks`, the customer and the external account may come from memory, and the write must
   * verify `checks`).
   */
  async function prepare(ctx: QuoteContext, ex: Executor, input: QuoteRequest, checks?: RowChecks) {
    const [source, destination] = await Promise.all([
      input.source.sourceType === 'ACCOUNT' ? accountSource(ctx, ex, input.source, checks) : realtimeSource(ctx, ex, input.source, checks),
      resolveDestination(ctx, ex, input, checks),
    ]);
    if (source.customer) deps.senderGate.check(ctx.platform, source.customer);
    checkCombination(input, source, destination);
    const destinationField = input.destination.destinationType === 'ACCOUNT' ? 'destination.accountId' : 'destination.currency';
    const limits = checkCurrencies(ctx.platform, source, destination, destinationField);
    const priced = await rates.price(ctx.platform, {
      sending: source.currency,
      receiving: destination.currency,
      lockedSide: input.lockedCurrencySide,
      amount: input.lockedCurrencyAmount,
      paidOut: destination.delivery.kind !== 'INTERNAL',
    });
    checkLimits(priced, limits);
    checkReceiverLimits(priced, destination);
    checkPayerData(destination.requiredPayerDataFields, input, source.customer);
    return { source, destination, priced };
  }

  /**
   * POST /quotes. Reads and checks first, then writes the quote, its expiry job (unless its
   * second has one), its transaction and its event as one statement (with the idempotency
   * record, when there is one): atomic without an explicit transaction. The customer and the
   * external account it was decided on may come from this process's memory; the statement
   * verifies that they are still the rows read and refuses itself otherwise, and then the quote
   * is made again from fresh reads.
   * With immediatelyExecute the quote is created and executed in one transaction.
   */
  async function createQuote(ctx: QuoteContext, input: QuoteRequest): Promise<QuoteView> {
    if (input.immediatelyExecute === true && input.source.sourceType === 'ACCOUNT') return createAndExecute(ctx, input);
    return withRowChecks('quote', (checks) => createChecked(ctx, input, checks));
  }

  async function createChecked(ctx: QuoteContext, input: QuoteRequest, checks: RowChecks): Promise<QuoteView> {
    const { platform } = ctx;
    const { source, destination, priced } = await prepare(ctx, database.db, input, checks);
    const q = buildQuote(ctx, input, source, destination, priced);
    const expiry = expiries.jobsFor(platform.id, q.expiresAt);
    const transaction = transactions.creation(platform, transactionDraft(q, source, destination));
    const writes = [repo.quoteInsert(q), ...outboxWrites({ jobs: jobRows(platform, expiry, clock) }), ...transaction.writes];
    const finish = sql`select corridor_expect(${checks.holds()}, 'a row this quote was decided on changed')`;
    // Only new rows: concurrent quotes may share the statement.
    const view = await commitWrites(ctx, writes, presentQuote(q), { finish, batch: { kind: 'quote' } });
    expiries.committed(platform.id, expiry);
    execution.remember(q, transaction.record);
    return view;
  }

  async function createAndExecute(ctx: QuoteContext, input: QuoteRequest): Promise<QuoteView> {
    const { platform } = ctx;
    const { source, destination, priced } = await prepare(ctx, database.db, input);
    const q = buildQuote(ctx, input, source, destination, priced);
    const ledgerAccounts = await quoteAccounts(ledger, platform, q);
    const started: QuoteRecord = { ...q, status: execution.statusAfterClaim(q), executedAt: q.createdAt };
    await ctx.tx(async (trx) => {
      await repo.insertQuote(trx, platform, started, execution.recoveryJob(started, started.createdAt));
      await transactions.create(trx, platform, transactionDraft(q, source, destination));
      await execution.startExecution(trx, platform, started, ledgerAccounts);
      return presentQuote(started);
    }, { provisional: true });
    return presentQuote(await execution.continueAfterCommit(platform, started, ledgerAccounts));
  }

  return { createQuote };
}
