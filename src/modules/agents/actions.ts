/**
 * Agent actions: every money movement an agent asks for. The policy is evaluated on the agent's
 * row, locked (SELECT … FOR NO KEY UPDATE) inside the very transaction that records the action
 * and — under AUTO — moves the money, so concurrent requests of one agent are decided one after
 * the other, each seeing the spend of those before it (docs/agents.md, "Atomic limits").
 *
 * Lock order, in every transaction that takes more than one of them: the agent's row, then the
 * money (quote, transaction, ledger accounts), then the action's row. Approving takes no agent
 * lock and writes its action after the money, like AUTO; quote expiry and failed payments reach
 * the action from the money too (docs/decisions.md, Agents).
 */
import type { Clock } from '../../core/clock.js';
import type { CommitOptions, ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { emitEvents } from '../../core/events.js';
import { newId } from '../../core/ids.js';
import { isUniqueViolation, type Database, type Trx } from '../../db/database.js';
import type { CustomerService } from '../customers/service.js';
import type { Platform } from '../platform/service.js';
import type { QuoteView } from '../quotes/schemas.js';
import type { QuoteService } from '../quotes/service.js';
import type { RateService } from '../rates/service.js';
import type { TransactionView } from '../transactions/schemas.js';
import type { TransactionStatus } from '../transactions/lifecycle.js';
import type { TransactionRecord, TransactionService } from '../transactions/service.js';
import type { TransferService } from '../transfers/service.js';
import * as actionsRepo from './actions-repository.js';
import type { ActionRow } from './actions-repository.js';
import { checkPeriods, converter, evaluate, executionMode, refusalError, type Converter, type ExecutionMode, type SpendRequest } from './policy.js';
import { findAgent } from './repository.js';
import type { ActionType, AgentActionView, TransferDetailsView } from './schemas.js';
import { periodOf, usageByAgent, usageIn, type Period } from './usage.js';

type Ctx = ServiceContext<Platform>;

export interface ActionDeps {
  database: Database;
  clock: Clock;
  rates: Pick<RateService, 'getRates'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
  quotes: Pick<QuoteService, 'getQuote' | 'executeQuote'>;
  transfers: Pick<TransferService, 'transferIn' | 'transferOut'>;
  transactions: Pick<TransactionService, 'find' | 'present' | 'get'>;
}

/** What an agent asks for, as the policy sees it and as the action shows it. */
export interface Submission {
  type: ActionType;
  request: SpendRequest;
  quote?: QuoteView;
  transferDetails?: TransferDetailsView;
  /** The Service-Wallet-Signature the agent sent, kept if the action is held for approval. */
  walletSignature?: string;
}

/** How to carry the action out through the quotes or transfers service. */
export interface Execution<R> {
  perform(ctx: Ctx): Promise<R>;
  transactionIdOf(result: R): string;
  quoteOf?(result: R): QuoteView;
}

/** The agent an action is recorded for, with its customer. */
interface ActingAgent {
  id: string;
  customerId: string;
  platformCustomerId: string;
}

/** What the request answers (and an Idempotency-Key replay repeats); default: the action. */
export type Respond = (action: AgentActionView) => unknown;

/** The locked evaluation decided differently from the unlocked guess: start again. */
class ModeChanged extends Error {}
class NotPending extends ServiceError {
  constructor() {
    super('AGENT_ACTION_NOT_PENDING', 'this action is not pending approval');
  }
}

/** Payment outcomes that undo an approved action: its spend stops counting. */
const FAILED_PAYMENT: readonly TransactionStatus[] = ['FAILED', 'REJECTED', 'REFUNDED'];
/** Transaction statuses after which an agent's action stops counting: failed payments, and expired quotes. */
export const ENDS_ACTION: readonly TransactionStatus[] = [...FAILED_PAYMENT, 'EXPIRED'];

export function present(row: ActionRow, related: { quote?: QuoteView; transaction?: TransactionView }): AgentActionView {
  const executed = row.status === 'APPROVED' || row.status === 'FAILED';
  return {
    id: row.id,
    agentId: row.agent_id,
    customerId: row.customer_id,
    platformCustomerId: row.platform_customer_id,
    status: row.status,
    type: row.type,
    ...(related.quote && { quote: related.quote }),
    ...(row.transfer_details && { transferDetails: row.transfer_details }),
    ...(executed && related.transaction && { transaction: related.transaction }),
    ...(row.rejection_reason && { rejectionReason: row.rejection_reason }),
    ...(row.failure_reason && { failureReason: row.failure_reason }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function createActions(deps: ActionDeps) {
  const { database, clock } = deps;

  async function currentConverter(): Promise<Converter> {
    return converter((await deps.rates.getRates()).usdPrices);
  }

  /** The agent as it is now, read without a lock (the locked read in `reserve` decides). */
  async function liveAgent(platform: Platform, agentId: string) {
    const row = await findAgent(database.db, platform.id, agentId);
    if (!row) throw new ServiceError('UNAUTHORIZED', 'this agent no longer exists');
    return row;
  }

  /**
   * Locks the agent's row, sums what already counts, and evaluates the policy: refusals throw
   * (rolling the transaction back), an allowed spend returns what the new action will count.
   */
  async function reserve(trx: Trx, platform: Platform, agentId: string, request: SpendRequest, expected: ExecutionMode, convert: Converter) {
    const row = await findAgent(trx, platform.id, agentId, true);
    if (!row) throw new ServiceError('UNAUTHORIZED', 'this agent no longer exists');
    if (row.is_paused) throw new ServiceError('AGENT_PAUSED', 'this agent is paused');
    const period = periodOf(clock.now(platform));
    const rows = (await usageByAgent(trx, [agentId], period)).get(agentId) ?? [];
    const decision = evaluate(row.policy, request, usageIn(rows, row.policy.spendingLimits.currency, convert), convert);
    if (decision.outcome === 'REFUSED') throw refusalError(decision.refusal);
    if (decision.mode !== expected) throw new ModeChanged();
    return { spend: decision.spend, spendCurrency: decision.spendCurrency, period };
  }

  function newRow(agent: ActingAgent, platform: Platform, submission: Submission, reserved: { spend: number; spendCurrency: string; period: Period }) {
    const now = clock.now(platform);
    return (status: ActionRow['status'], transactionId: string | null): ActionRow => ({
      id: newId('AgentAction'),
      platform_id: platform.id,
      agent_id: agent.id,
      customer_id: agent.customerId,
      platform_customer_id: agent.platformCustomerId,
      type: submission.type,
      status,
      quote_id: submission.quote?.id ?? null,
      transfer_details: submission.transferDetails ?? null,
      transaction_id: transactionId,
      rejection_reason: null,
      failure_reason: null,
      wallet_signature: status === 'PENDING_APPROVAL' ? (submission.walletSignature ?? null) : null,
      spend_amount: reserved.spend,
      spend_currency: reserved.spendCurrency,
      spend_day: reserved.period.day,
      spend_month: reserved.period.month,
      created_at: now,
      updated_at: now,
    });
  }

  async function insert(trx: Trx, row: ActionRow): Promise<void> {
    try {
      await actionsRepo.insertAction(trx, row);
    } catch (error) {
      if (isUniqueViolation(error, 'agent_actions_quote_live')) {
        throw new ServiceError('CONFLICT', 'this quote already has an action that is pending approval or executed');
      }
      throw error;
    }
  }

  async function transactionView(trx: Trx, platform: Platform, id: string): Promise<TransactionView | undefined> {
    const record = await deps.transactions.find(trx, platform.id, id);
    return record && deps.transactions.present(record, platform.id);
  }

  /**
   * Submits an action for the calling agent. Returns the new action's id; the request's
   * idempotency record holds `respond(view)` as of the first commit.
   */
  async function submit<R>(ctx: Ctx, agentId: string, submission: Submission, execution: Execution<R>, respond: Respond = (v) => v): Promise<string> {
    const convert = await currentConverter();
    let live = await liveAgent(ctx.platform, agentId);
    const customer = await deps.customers.requireCustomer(database.db, ctx.platform.id, live.customer_id);
    const agent = { id: agentId, customerId: customer.id, platformCustomerId: customer.platformCustomerId };
    for (let attempt = 1; ; attempt++) {
      try {
        // Which path to take is guessed from an unlocked read; the locked evaluation confirms it.
        const mode = executionMode(live.policy, submission.request, convert);
        if (mode === 'APPROVAL_REQUIRED') return await submitForApproval(ctx, agent, submission, convert, respond);
        return await submitAuto(ctx, agent, submission, execution, convert, respond);
      } catch (error) {
        if (!(error instanceof ModeChanged)) throw error;
        if (attempt >= 3) throw new ServiceError('CONFLICT', "the agent's policy changed while this action was evaluated; retry");
        live = await liveAgent(ctx.platform, agentId);
      }
    }
  }

  async function submitForApproval(ctx: Ctx, agent: ActingAgent, submission: Submission, convert: Converter, respond: Respond): Promise<string> {
    let actionId!: string;
    await ctx.tx(async (trx) => {
      const reserved = await reserve(trx, ctx.platform, agent.id, submission.request, 'APPROVAL_REQUIRED', convert);
      const row = newRow(agent, ctx.platform, submission, reserved)('PENDING_APPROVAL', null);
      await insert(trx, row);
      const view = present(row, { quote: submission.quote });
      await emitEvents(trx, ctx.platform, [{ type: 'AGENT_ACTION.PENDING_APPROVAL', data: view }], clock);
      actionId = row.id;
      return respond(view);
    });
    return actionId;
  }

  /**
   * AUTO: the quotes or transfers service runs its own transaction through `ctx.tx`; the context
   * handed to it wraps that transaction so the policy check, the action and the money movement
   * commit (or roll back) together.
   */
  async function submitAuto<R>(ctx: Ctx, agent: ActingAgent, submission: Submission, execution: Execution<R>, convert: Converter, respond: Respond): Promise<string> {
    let actionId: string | undefined;
    const gated: Ctx = {
      platform: ctx.platform,
      agentId: agent.id,
      tx: async <T>(work: (trx: Trx) => Promise<T>, options?: CommitOptions): Promise<T> => {
        let result!: T;
        await ctx.tx(async (trx) => {
          const reserved = await reserve(trx, ctx.platform, agent.id, submission.request, 'AUTO', convert);
          result = await work(trx);
          const transactionId = execution.transactionIdOf(result as unknown as R);
          const row = newRow(agent, ctx.platform, submission, reserved)('APPROVED', transactionId);
          await insert(trx, row);
          actionId = row.id;
          const quote = execution.quoteOf?.(result as unknown as R) ?? submission.quote;
          return respond(present(row, { quote, transaction: await transactionView(trx, ctx.platform, transactionId) }));
        }, options);
        return result;
      },
    };
    await execution.perform(gated);
    if (!actionId) throw new Error('the executing service never opened its transaction');
    return actionId;
  }

  async function requireAction(ctx: Ctx, agentId: string, actionId: string): Promise<ActionRow> {
    const row = await actionsRepo.findAction(database.db, ctx.platform.id, actionId, agentId);
    if (!row) throw new ServiceError('NOT_FOUND', 'agent action not found');
    return row;
  }

  /** The quote or transfer behind a pending action, as an Execution. */
  function executionOf(row: ActionRow): Execution<QuoteView | TransactionView> {
    if (row.type === 'EXECUTE_QUOTE') {
      return {
        perform: (ctx) => deps.quotes.executeQuote(ctx, row.quote_id!, { 'service-wallet-signature': row.wallet_signature ?? undefined }),
        transactionIdOf: (r) => (r as QuoteView).transactionId,
        quoteOf: (r) => r as QuoteView,
      };
    }
    const d = row.transfer_details!;
    const input = { source: { accountId: d.sourceAccountId }, destination: { accountId: d.destinationAccountId }, amount: d.amount };
    return {
      perform: (ctx) => (row.type === 'TRANSFER_OUT' ? deps.transfers.transferOut(ctx, input) : deps.transfers.transferIn(ctx, input)),
      transactionIdOf: (r) => (r as TransactionView).id,
    };
  }

  /**
   * An action approved on a later day than it was submitted on moves its spend to the day (and
   * month) of the approval, within that period's limits: the agent's row is locked and usage
   * summed as at submission. Otherwise an action held into a new month, approved beside the
   * new month's own, would pass the monthly limit. Throws the refusal, which fails the action.
   */
  async function recount(trx: Trx, platform: Platform, row: ActionRow): Promise<Pick<actionsRepo.ActionMove, 'spend_day' | 'spend_month'>> {
    const period = periodOf(clock.now(platform));
    if (row.spend_day === period.day) return {};
    const agent = await findAgent(trx, platform.id, row.agent_id, true);
    if (!agent) throw new ServiceError('UNAUTHORIZED', 'this agent no longer exists');
    const convert = await currentConverter();
    const { currency } = agent.policy.spendingLimits;
    const usage = usageIn((await usageByAgent(trx, [row.agent_id], period)).get(row.agent_id) ?? [], currency, convert);
    const spend = convert(row.spend_amount, row.spend_currency, currency);
    // Submitted earlier this month, it already counts in the month.
    if (row.spend_month === period.month) usage.monthlySpend -= spend;
    const refusal = checkPeriods(agent.policy.spendingLimits, usage, spend);
    if (refusal?.outcome === 'REFUSED') throw refusalError(refusal.refusal);
    return { spend_day: period.day, spend_month: period.month };
  }

  /**
   * POST /agents/{agentId}/actions/{actionId}/approve: executes the action. The approval and the
   * execution's first step commit together; if execution is refused (expired quote, insufficient
   * funds, …) the action becomes FAILED instead and its spend stops counting.
   */
  async function approve(ctx: Ctx, agentId: string, actionId: string): Promise<AgentActionView> {
    const row = await requireAction(ctx, agentId, actionId);
    // Approving after the quote expired fails the action (the reference's approve): the expiry
    // may simply have got there first.
    if (row.status === 'FAILED' && row.failure_reason === 'QUOTE_EXPIRED') return view(ctx, row);
    if (row.status !== 'PENDING_APPROVAL') throw new NotPending();
    const quote = row.quote_id ? await deps.quotes.getQuote(ctx, row.quote_id) : undefined;
    const execution = executionOf(row);
    const approving: Ctx = {
      platform: ctx.platform,
      agentId: row.agent_id,
      tx: async <T>(work: (trx: Trx) => Promise<T>, options?: CommitOptions): Promise<T> => {
        let result!: T;
        await ctx.tx(async (trx) => {
          // The agent (when the period changed), the money, the action last, as under AUTO (see
          // the lock order above); one update, since a second one of the row would re-check its
          // foreign key on the agent.
          const recounted = await recount(trx, ctx.platform, row);
          result = await work(trx);
          const transactionId = execution.transactionIdOf(result as unknown as QuoteView | TransactionView);
          const patch = { transaction_id: transactionId, ...recounted };
          const approved = await actionsRepo.moveAction(trx, ctx.platform.id, row.id, 'PENDING_APPROVAL', 'APPROVED', patch, clock.now(ctx.platform));
          if (!approved) throw new NotPending();
          const transaction = await transactionView(trx, ctx.platform, transactionId);
          return present(approved, { quote: execution.quoteOf?.(result as unknown as QuoteView) ?? quote, transaction });
        }, options);
        return result;
      },
    };
    try {
      await execution.perform(approving);
    } catch (error) {
      if (error instanceof NotPending || !isOutcome(error)) throw error;
      return fail(ctx, row, error.code, quote);
    }
    return view(ctx, await requireAction(ctx, agentId, actionId));
  }

  /**
   * A refusal that decides the action (the quote expired, the funds fall short, the payee is
   * gone); not a failure of this attempt (the database, a lost Idempotency-Key lease), after which
   * the action stays pending for another approve.
   */
  function isOutcome(error: unknown): error is ServiceError {
    return error instanceof ServiceError && error.status < 500 && error.code !== 'IDEMPOTENCY_KEY_IN_USE';
  }

  async function fail(ctx: Ctx, row: ActionRow, reason: string, quote: QuoteView | undefined): Promise<AgentActionView> {
    return ctx.tx(async (trx) => {
      const failed = await actionsRepo.moveAction(trx, ctx.platform.id, row.id, 'PENDING_APPROVAL', 'FAILED', { failure_reason: reason }, clock.now(ctx.platform));
      if (!failed) throw new NotPending();
      return present(failed, { quote });
    });
  }

  /** POST /agents/{agentId}/actions/{actionId}/reject: never executed; its spend stops counting. */
  async function reject(ctx: Ctx, agentId: string, actionId: string, reason: string | undefined): Promise<AgentActionView> {
    const row = await requireAction(ctx, agentId, actionId);
    if (row.status !== 'PENDING_APPROVAL') throw new NotPending();
    const quote = row.quote_id ? await deps.quotes.getQuote(ctx, row.quote_id) : undefined;
    return ctx.tx(async (trx) => {
      const rejected = await actionsRepo.moveAction(trx, ctx.platform.id, row.id, 'PENDING_APPROVAL', 'REJECTED', { rejection_reason: reason ?? null }, clock.now(ctx.platform));
      if (!rejected) throw new NotPending();
      return present(rejected, { quote });
    });
  }

  /** Transaction hook: an agent's payment that failed fails its action (in the same transaction). */
  async function onTransactionChanged(trx: Trx, platform: { id: string; clockOffsetMs: number }, record: TransactionRecord): Promise<void> {
    if (!record.agentId) return;
    const now = clock.now(platform);
    if (record.status === 'EXPIRED' && record.quoteId) {
      await actionsRepo.failActionOf(trx, platform.id, { column: 'quote_id', id: record.quoteId, from: 'PENDING_APPROVAL' }, 'QUOTE_EXPIRED', now);
    } else if (FAILED_PAYMENT.includes(record.status)) {
      await actionsRepo.failActionOf(trx, platform.id, { column: 'transaction_id', id: record.id, from: 'APPROVED' }, record.failureReason ?? `PAYMENT_${record.status}`, now);
    }
  }

  /** The API view, with the quote and the transaction as they stand now. */
  async function view(ctx: Ctx, row: ActionRow): Promise<AgentActionView> {
    const [quote, transaction] = await Promise.all([
      row.quote_id ? deps.quotes.getQuote(ctx, row.quote_id).catch(() => undefined) : undefined,
      row.transaction_id ? deps.transactions.get(ctx, row.transaction_id).catch(() => undefined) : undefined,
    ]);
    return present(row, { quote, transaction });
  }

  return { submit, approve, reject, onTransactionChanged, view, requireAction };
}

export type Actions = ReturnType<typeof createActions>;
