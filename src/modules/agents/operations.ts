/**
 * What an agent does for its customer (/agents/me/*). Every object is checked against the agent's
 * customer: another customer's account, quote or transaction is "not found". Money movements go
 * through actions.ts, which applies the policy atomically with the spend.
 */
import type { Clock } from '../../core/clock.js';
import type { ServiceContext } from '../../core/context.js';
import { invalidInput, ServiceError, type ErrorCode } from '../../core/errors.js';
import type { Database, Executor } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { Page } from '../../http/pagination.js';
import type { AccountService } from '../accounts/service.js';
import type { InternalAccountView } from '../accounts/schemas.js';
import type { ExternalAccountService } from '../external-accounts/service.js';
import type { CustomerExternalAccountCreate, ExternalAccountView } from '../external-accounts/schemas.js';
import type { Platform } from '../platform/service.js';
import { checkImmediateSource } from '../quotes/create.js';
import type { QuoteRequest, QuoteView } from '../quotes/schemas.js';
import type { QuoteService } from '../quotes/service.js';
import type { TransactionView } from '../transactions/schemas.js';
import type { TransactionService } from '../transactions/service.js';
import type { TransferInput, TransferService } from '../transfers/service.js';
import { checkNotWallet, checkPullable } from '../transfers/parties.js';
import type { Actions, Submission } from './actions.js';
import * as actionsRepo from './actions-repository.js';
import { checkAccess, refusalError, type AgentPermission } from './policy.js';
import type { AgentRow } from './repository.js';
import type { ActionListQuery, AgentActionView, AgentExternalAccountQuery, AgentInternalAccountQuery, AgentTransactionListQuery, AgentView } from './schemas.js';

type Ctx = ServiceContext<Platform>;

/** The calling agent, as authentication established it. */
export interface Caller {
  agentId: string;
  customerId: string;
}

export interface OperationDeps {
  database: Database;
  clock: Clock;
  accounts: Pick<AccountService, 'getAccount' | 'listCustomerAccounts'>;
  externalAccounts: Pick<ExternalAccountService, 'findExternalAccount' | 'createForCustomer' | 'list' | 'get' | 'remove'>;
  quotes: Pick<QuoteService, 'createQuote' | 'executeQuote' | 'getQuote'>;
  transfers: Pick<TransferService, 'transferIn' | 'transferOut' | 'requireRail'>;
  transactions: Pick<TransactionService, 'get' | 'list'>;
  actions: Actions;
  requireAgent(ex: Executor, platformId: string, id: string): Promise<AgentRow>;
  viewOf(ex: Executor, platform: Platform, row: AgentRow): Promise<AgentView>;
}

function notFound(code: ErrorCode, field: string, message: string): ServiceError {
  return new ServiceError(code, message, { details: { errors: [{ field, constraint: 'exists', message }] } });
}

export function createAgentOperations(deps: OperationDeps) {
  const { database, actions } = deps;
  const db = database.db;

  /** An internal account of the caller's customer, else 404 naming the field. */
  async function customerAccount(ctx: Ctx, caller: Caller, id: string, field: string) {
    const account = await deps.accounts.getAccount(db, ctx.platform.id, id).catch(() => undefined);
    if (account?.customerId !== caller.customerId) throw notFound('NOT_FOUND', field, `internal account ${id} not found`);
    return account;
  }

  async function customerExternalAccount(ctx: Ctx, caller: Caller, id: string, field: string) {
    const account = await deps.externalAccounts.findExternalAccount(db, ctx.platform.id, id);
    if (account?.customerId !== caller.customerId) throw notFound('NOT_FOUND', field, `external account ${id} not found`);
    return account;
  }

  /** Permission and allowed accounts, checked up front where nothing is spent (quote creation). */
  async function checkAccessNow(ctx: Ctx, caller: Caller, permission: AgentPermission, accountIds: string[]): Promise<void> {
    const row = await deps.requireAgent(db, ctx.platform.id, caller.agentId);
    const refusal = checkAccess(row.policy, { permission, amount: 0, currency: '', accountIds, ruleAccountId: '' });
    if (refusal?.outcome === 'REFUSED') throw refusalError(refusal.refusal);
  }

  /** Internal account ids a quote request touches, all checked to be the customer's. */
  async function quoteAccounts(ctx: Ctx, caller: Caller, input: QuoteRequest): Promise<string[]> {
    if (input.source.sourceType !== 'ACCOUNT') {
      throw invalidInput('source.sourceType', 'agents pay from an internal account of their customer (ACCOUNT)', 'enum');
    }
    if (input.source.customerId !== undefined && input.source.customerId !== caller.customerId) {
      throw invalidInput('source.customerId', "must be the agent's customer (or be left out)", 'agentCustomer');
    }
    const source = await customerAccount(ctx, caller, input.source.accountId, 'source.accountId');
    // Before anything is created: the quote service would see immediatelyExecute only as false.
    checkImmediateSource(input, source.type);
    const ids = [source.id];
    const destination = input.destination;
    if (destination.destinationType === 'ACCOUNT') {
      if (destination.accountId.startsWith('ExternalAccount:')) await customerExternalAccount(ctx, caller, destination.accountId, 'destination.accountId');
      else ids.push((await customerAccount(ctx, caller, destination.accountId, 'destination.accountId')).id);
    }
    return ids;
  }

  function quoteSubmission(quote: QuoteView): Submission {
    const internalDestination = quote.destination.accountId?.startsWith('InternalAccount:') ? [quote.destination.accountId] : [];
    return {
      type: 'EXECUTE_QUOTE',
      quote,
      request: {
        permission: 'EXECUTE_QUOTES',
        amount: quote.totalSendingAmount,
        currency: quote.sendingCurrency.code,
        accountIds: [quote.source.accountId!, ...internalDestination],
        ruleAccountId: quote.source.accountId!,
      },
    };
  }

  /** Executes through the policy: the action's id. */
  function submitQuote(ctx: Ctx, caller: Caller, quote: QuoteView, headers: Record<string, string | undefined>, respond?: (a: AgentActionView) => unknown) {
    const execution = {
      perform: (gated: Ctx) => deps.quotes.executeQuote(gated, quote.id, headers),
      transactionIdOf: (r: QuoteView) => r.transactionId,
      quoteOf: (r: QuoteView) => r,
    };
    const submission = { ...quoteSubmission(quote), walletSignature: headers['service-wallet-signature'] };
    return actions.submit(ctx, caller.agentId, submission, execution, respond);
  }

  /** POST /agents/me/quotes. With immediatelyExecute the new quote is executed as an EXECUTE_QUOTE action. */
  async function createQuote(ctx: Ctx, caller: Caller, input: QuoteRequest): Promise<QuoteView> {
    const accountIds = await quoteAccounts(ctx, caller, input);
    await checkAccessNow(ctx, caller, 'CREATE_QUOTES', accountIds);
    if (!input.immediatelyExecute) return deps.quotes.createQuote(ctx, input);
    await checkAccessNow(ctx, caller, 'EXECUTE_QUOTES', accountIds);
    // The quote commits on its own (not as the request's idempotent answer); the answer is the
    // quote as the execution step leaves it.
    const creating: Ctx = { platform: ctx.platform, agentId: ctx.agentId, tx: (work) => transact(db, work) };
    const quote = await deps.quotes.createQuote(creating, { ...input, immediatelyExecute: false });
    await submitQuote(ctx, caller, quote, {}, (action) => action.quote);
    return deps.quotes.getQuote(ctx, quote.id);
  }

  /** POST /agents/me/quotes/{quoteId}/execute: only quotes this agent created. */
  async function executeQuote(ctx: Ctx, caller: Caller, quoteId: string, headers: Record<string, string | undefined>): Promise<AgentActionView> {
    const quote = await deps.quotes.getQuote(ctx, quoteId, { agentId: caller.agentId });
    if (quote.status === 'EXPIRED' || (quote.status === 'PENDING' && new Date(quote.expiresAt) <= deps.clock.now(ctx.platform))) {
      throw new ServiceError('QUOTE_EXPIRED', `this quote expired at ${quote.expiresAt}; create a new one`, { details: { expiresAt: quote.expiresAt } });
    }
    if (quote.status !== 'PENDING') throw new ServiceError('QUOTE_ALREADY_EXECUTED', `this quote was already executed (status ${quote.status})`);
    // A rejection stands: asking again for the same quote would only ask the platform again.
    if (await actionsRepo.findQuoteAction(db, ctx.platform.id, quote.id, 'REJECTED')) {
      throw new ServiceError('CONFLICT', 'the platform rejected executing this quote; create a new one to ask again');
    }
    return actionView(ctx, caller, await submitQuote(ctx, caller, quote, headers));
  }

  /** POST /agents/me/transfer-out and /transfer-in. */
  async function transfer(ctx: Ctx, caller: Caller, direction: 'OUT' | 'IN', input: TransferInput): Promise<AgentActionView> {
    const out = direction === 'OUT';
    const [internalId, externalId] = out ? [input.source.accountId, input.destination.accountId] : [input.destination.accountId, input.source.accountId];
    const [internalField, externalField] = out ? ['source.accountId', 'destination.accountId'] : ['destination.accountId', 'source.accountId'];
    const internal = await customerAccount(ctx, caller, internalId, internalField);
    const external = await customerExternalAccount(ctx, caller, externalId, externalField);
    // Refused now, not after an approval it could never pass.
    if (out) checkNotWallet(internal, internalField);
    else checkPullable(external, externalField);
    if (internal.currency !== external.currency) {
      const message = `transfers are same-currency only: the internal account holds ${internal.currency}, the external account ${external.currency}`;
      throw new ServiceError('INVALID_CURRENCY', message, { details: { errors: [{ field: externalField, constraint: 'currency', message }] } });
    }
    deps.transfers.requireRail(ctx.platform);
    const submission: Submission = {
      type: out ? 'TRANSFER_OUT' : 'TRANSFER_IN',
      transferDetails: { amount: input.amount, currency: internal.currency, sourceAccountId: input.source.accountId, destinationAccountId: input.destination.accountId },
      request: { permission: 'CREATE_TRANSFERS', amount: input.amount, currency: internal.currency, accountIds: [internal.id], ruleAccountId: internal.id },
    };
    const execution = {
      perform: (gated: Ctx) => (out ? deps.transfers.transferOut(gated, input) : deps.transfers.transferIn(gated, input)),
      transactionIdOf: (r: TransactionView) => r.id,
    };
    return actionView(ctx, caller, await actions.submit(ctx, caller.agentId, submission, execution));
  }

  async function actionView(ctx: Ctx, caller: Caller, actionId: string): Promise<AgentActionView> {
    return actions.view(ctx, await actions.requireAction(ctx, caller.agentId, actionId));
  }

  async function listActions(ctx: Ctx, caller: Caller, query: ActionListQuery): Promise<Page<AgentActionView>> {
    const page = await actionsRepo.listAgentActions(db, ctx.platform.id, caller.agentId, query);
    return { data: await Promise.all(page.rows.map((r) => actions.view(ctx, r))), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount: page.totalCount };
  }

  async function externalAccount(ctx: Ctx, caller: Caller, id: string): Promise<ExternalAccountView> {
    const account = await deps.externalAccounts.get(ctx, 'customer', id);
    if (account.customerId !== caller.customerId) throw new ServiceError('NOT_FOUND', 'external account not found');
    return account;
  }

  return {
    profile: async (ctx: Ctx, caller: Caller): Promise<AgentView> => deps.viewOf(db, ctx.platform, await deps.requireAgent(db, ctx.platform.id, caller.agentId)),
    listTransactions: (ctx: Ctx, caller: Caller, query: AgentTransactionListQuery): Promise<Page<TransactionView>> => {
      // Customer filters are not part of the agent's query; ignored like any unknown parameter.
      const { customerId: _customer, platformCustomerId: _platformCustomer, ...own } = query as AgentTransactionListQuery & Record<string, unknown>;
      return deps.transactions.list(ctx, own, { customerId: caller.customerId });
    },
    getTransaction: (ctx: Ctx, caller: Caller, id: string): Promise<TransactionView> => deps.transactions.get(ctx, id, { customerId: caller.customerId }),
    createQuote,
    getQuote: (ctx: Ctx, caller: Caller, id: string): Promise<QuoteView> => deps.quotes.getQuote(ctx, id, { agentId: caller.agentId }),
    executeQuote,
    transferOut: (ctx: Ctx, caller: Caller, input: TransferInput) => transfer(ctx, caller, 'OUT', input),
    transferIn: (ctx: Ctx, caller: Caller, input: TransferInput) => transfer(ctx, caller, 'IN', input),
    listActions,
    getAction: actionView,
    listInternalAccounts: (ctx: Ctx, caller: Caller, query: AgentInternalAccountQuery): Promise<Page<InternalAccountView>> =>
      deps.accounts.listCustomerAccounts(ctx, { ...query, customerId: caller.customerId }),
    listExternalAccounts: (ctx: Ctx, caller: Caller, query: AgentExternalAccountQuery): Promise<Page<ExternalAccountView>> =>
      deps.externalAccounts.list(ctx, 'customer', { ...query, customerId: caller.customerId }),
    getExternalAccount: externalAccount,
    async createExternalAccount(ctx: Ctx, caller: Caller, input: CustomerExternalAccountCreate): Promise<ExternalAccountView> {
      if (input.customerId !== undefined && input.customerId !== caller.customerId) {
        throw invalidInput('customerId', "must be the agent's customer (or be left out)", 'agentCustomer');
      }
      return deps.externalAccounts.createForCustomer(ctx, { ...input, customerId: caller.customerId });
    },
    async removeExternalAccount(ctx: Ctx, caller: Caller, id: string): Promise<void> {
      await externalAccount(ctx, caller, id);
      await deps.externalAccounts.remove(ctx, 'customer', id);
    },
  };
}

export type AgentOperations = ReturnType<typeof createAgentOperations>;
