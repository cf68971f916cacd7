import type { Clock } from '../../core/clock.js';
import type { PlatformRef, ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { enqueueJobs, platformAsOfDue, type JobRunner } from '../../core/jobs.js';
import type { Database, Trx } from '../../db/database.js';
import type { LedgerService } from '../ledger/service.js';
import type { FailureReason } from './lifecycle.js';
import type { RateDetails, TransactionSource, TransactionView } from './schemas.js';
import type { ApprovalInfo, ApprovalDecision as WebhookApprovalDecision } from '../webhooks/service.js';
import { presentTransaction, type TransactionRecord, type TransactionService, type TransitionPatch } from './service.js';
import { transact } from '../../db/transact.js';

export interface IncomingPaymentDeps {
  database: Database;
  clock: Clock;
  ledger: LedgerService;
  transactions: TransactionService;
  jobs: JobRunner;
  /** Delivers the INCOMING_PAYMENT.PENDING webhook now rather than on the next poll. */
  wakeWebhooks: () => void;
  /**
   * The platform's webhook endpoint as stored, read in the payment's transaction: with one, the
   * payment waits for its answer. Not a cached copy, which another process's PATCH /config can
   * have changed a moment ago.
   */
  webhookEndpointOf: (trx: Trx, platformId: string) => Promise<string | null>;
}

export interface IncomingPayment {
  /** The transaction's id, when the caller assigned one (a second receive with it fails: at most once). */
  id?: string;
  customer: { id: string; platformCustomerId: string } | null;
  /** The internal account credited. */
  account: { id: string; currency: string };
  amount: number;
  source: TransactionSource;
  counterpartyInformation?: Record<string, unknown>;
  rateDetails?: RateDetails;
  description?: string;
}

/** Opens the transaction an incoming payment is created in: runs `create` in it, commits, resolves to its own result. */
export type ReceiveWithin<R> = (create: (trx: Trx) => Promise<TransactionRecord>) => Promise<R>;

export type CompletedHook = (trx: Trx, platform: PlatformRef, record: TransactionRecord) => Promise<void>;

/** A final decision on a payment waiting for the platform (the webhook's `await` is not one). */
export type ApprovalDecision =
  | Exclude<WebhookApprovalDecision, { kind: 'await' }>
  | { kind: 'fail'; failureReason: ApprovalFailure }
  /** Approved, but the account's balance cannot take the credit (the ledger's balance limit). */
  | { kind: 'fail'; failureReason: 'OFFRAMP_FAILED'; failureDetail: 'BALANCE_LIMIT' };
type ApprovalFailure = Extract<FailureReason, 'PAYMENT_APPROVAL_TIMED_OUT' | 'PAYMENT_APPROVAL_WEBHOOK_ERROR'>;

/**
 * How long a platform that answered the INCOMING_PAYMENT.PENDING webhook with 202 has to call
 * approve or reject (platform clock) before the payment fails with PAYMENT_APPROVAL_TIMED_OUT.
 */
export const APPROVAL_DEADLINE_MS = 5_000;
const DEADLINE_JOB = 'incoming.approval-deadline';
/** Applies a webhook answer again when applying it as it arrived failed: the answer is never lost. */
const ANSWER_JOB = 'incoming.approval-answer';
/** The reject call allows this many characters; a webhook answer's reason is cut to it. */
const REJECTION_REASON_LENGTH = 500;

/**
 * Incoming payments to an internal account. A platform with a webhook endpoint decides: the
 * payment waits as PENDING while INCOMING_PAYMENT.PENDING asks it (200 approve, 403/422 reject,
 * 202 decide within APPROVAL_DEADLINE_MS through approve/reject, no or bad answer → FAILED).
 * Without an endpoint nobody can be asked, so the payment is credited at once. The money comes
 * from the platform's UMA settlement account, the ledger's view of the counterparty.
 */
export function createIncomingPayments(deps: IncomingPaymentDeps) {
  const { database, clock, ledger, transactions } = deps;
  /** What other domains do when an incoming payment completes, in its transaction (UMA schedules the forward to a deposit account). */
  const hooks: { completed: CompletedHook[] } = { completed: [] };

  async function complete(trx: Trx, platform: PlatformRef, id: string, patch: TransitionPatch): Promise<TransactionRecord | undefined> {
    const record = await transactions.transition(trx, platform, id, 'COMPLETED', patch);
    if (record) for (const hook of hooks.completed) await hook(trx, platform, record);
    return record;
  }

  async function credit(trx: Trx, platform: PlatformRef, record: TransactionRecord): Promise<void> {
    const settlement = await ledger.systemAccount(platform.id, record.receivedCurrency, 'UMA_SETTLEMENT');
    const accountId = record.destination.accountId!;
    await ledger.record(trx, platform, [{ debit: settlement, credit: accountId, amount: record.receivedAmount, code: 'INCOMING' }], record.id);
  }

  /** Creates the payment in `trx`: PENDING for the platform to approve, or credited at once. */
  async function create(trx: Trx, platform: PlatformRef, payment: IncomingPayment): Promise<TransactionRecord> {
    const requireApproval = Boolean(await deps.webhookEndpointOf(trx, platform.id));
    const created = await transactions.create(trx, platform, {
      ...(payment.id && { id: payment.id }),
      type: 'INCOMING',
      status: requireApproval ? 'PENDING' : 'PROCESSING',
      awaitingApproval: requireApproval,
      customerId: payment.customer?.id ?? null,
      platformCustomerId: payment.customer?.platformCustomerId ?? null,
      source: payment.source,
      destination: { destinationType: 'ACCOUNT', accountId: payment.account.id, currency: payment.account.currency },
      sentAmount: null,
      sentCurrency: null,
      receivedAmount: payment.amount,
      receivedCurrency: payment.account.currency,
      exchangeRate: null,
      fees: null,
      quoteId: null,
      description: payment.description ?? null,
      counterpartyInformation: payment.counterpartyInformation ?? null,
      rateDetails: payment.rateDetails ?? null,
      paymentInstructions: null,
      agentId: null,
    });
    if (requireApproval) return created;
    await credit(trx, platform, created);
    return (await complete(trx, platform, created.id, { settledAt: clock.now(platform) }))!;
  }

  function receive(platform: PlatformRef, payment: IncomingPayment): Promise<TransactionRecord> {
    return receiveWithin(platform, payment, (work) => transact(database.db, work));
  }

  /**
   * `receive` in a transaction the caller opens (`within`), so that the payment commits together
   * with the caller's own writes (a request's Idempotency-Key record): `within` runs `create` in
   * it and resolves, once committed, to what the caller makes of the record.
   */
  async function receiveWithin<R>(platform: PlatformRef, payment: IncomingPayment, within: ReceiveWithin<R>): Promise<R> {
    await ledger.systemAccount(platform.id, payment.account.currency, 'UMA_SETTLEMENT');
    let asking = false;
    const result = await within(async (trx) => {
      const created = await create(trx, platform, payment);
      asking = created.awaitingApproval;
      return created;
    });
    if (asking) deps.wakeWebhooks();
    return result;
  }

  /**
   * The platform's answer to INCOMING_PAYMENT.PENDING, as the webhook worker read it. The event is
   * never sent again, so an answer that cannot be applied now (a database error, say) goes to a
   * durable job that applies it with the job runner's retries.
   */
  async function onWebhookAnswer(platform: PlatformRef, { event, decision }: ApprovalInfo): Promise<void> {
    const id = (event.data as { id?: string }).id;
    if (!id) return;
    try {
      await applyAnswer(platform, id, decision);
    } catch (error) {
      await enqueueJobs(database.db, platform, [{ kind: ANSWER_JOB, payload: { transactionId: id, decision } }], clock);
      throw error;
    }
  }

  /**
   * Applies a webhook answer to a payment still waiting for it. An approval whose credit the
   * account's balance cannot take (the ledger's limit; other credits since the payment arrived)
   * fails the payment instead of leaving it waiting.
   */
  async function applyAnswer(platform: PlatformRef, id: string, decision: WebhookApprovalDecision): Promise<void> {
    const record = await transactions.find(database.db, platform.id, id);
    if (!record) return;
    await ledger.systemAccount(platform.id, record.receivedCurrency, 'UMA_SETTLEMENT');
    try {
      await transact(database.db, async (trx) => {
        if (decision.kind === 'await') await awaitDecision(trx, platform, id);
        else if (decision.kind === 'fail') await decide(trx, platform, id, { kind: 'fail', failureReason: decision.failureReason });
        else await decide(trx, platform, id, decision);
      });
    } catch (error) {
      if (!ledger.isOverBalanceLimit(error)) throw error;
      await transact(database.db, (trx) => decide(trx, platform, id, { kind: 'fail', failureReason: 'OFFRAMP_FAILED', failureDetail: 'BALANCE_LIMIT' }));
    }
  }

  /** Applies the platform's decision to a payment waiting for it; false when it was no longer waiting. */
  async function decide(trx: Trx, platform: PlatformRef, id: string, decision: ApprovalDecision): Promise<TransactionRecord | undefined> {
    const record = await transactions.find(trx, platform.id, id, true);
    if (!record || record.type !== 'INCOMING' || record.status !== 'PENDING' || !record.awaitingApproval) return undefined;
    if (decision.kind === 'approve') {
      await credit(trx, platform, record);
      const info = decision.receiverCustomerInfo;
      return complete(trx, platform, id, {
        awaitingApproval: false,
        settledAt: clock.now(platform),
        ...(info && { counterpartyInformation: { ...(record.counterpartyInformation ?? {}), receiverCustomerInfo: info } }),
      });
    }
    if (decision.kind === 'reject') {
      const rejectionReason = decision.reason?.slice(0, REJECTION_REASON_LENGTH) ?? null;
      return transactions.transition(trx, platform, id, 'REJECTED', { awaitingApproval: false, failureDetail: 'PLATFORM_REJECTED', rejectionReason });
    }
    const failureDetail = 'failureDetail' in decision ? decision.failureDetail : undefined;
    return transactions.transition(trx, platform, id, 'FAILED', { awaitingApproval: false, failureReason: decision.failureReason, ...(failureDetail && { failureDetail }) });
  }

  async function decideByApi(ctx: ServiceContext, id: string, decision: ApprovalDecision): Promise<TransactionView> {
    if (decision.kind === 'approve') {
      const existing = await transactions.require(database.db, ctx.platform.id, id);
      await ledger.systemAccount(ctx.platform.id, existing.receivedCurrency, 'UMA_SETTLEMENT');
    }
    // The view, not the record, is what `ctx.tx` stores for an Idempotency-Key replay.
    return ctx.tx(async (trx) => {
      const decided = await decide(trx, ctx.platform, id, decision);
      if (decided) return presentTransaction(decided, ctx.platform.id);
      await transactions.require(trx, ctx.platform.id, id); // 404 when it does not exist at all
      throw new ServiceError('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', 'this transaction is not waiting for the platform\'s approval');
    });
  }

  /** The platform answered 202: it will call approve/reject; fail the payment if it never does. */
  async function awaitDecision(trx: Trx, platform: PlatformRef, id: string): Promise<void> {
    await enqueueJobs(trx, platform, [{ kind: DEADLINE_JOB, payload: { transactionId: id }, runAt: new Date(clock.now(platform).getTime() + APPROVAL_DEADLINE_MS) }], clock);
  }

  return {
    hooks,
    receive,
    receiveWithin,
    onWebhookAnswer,
    decide,
    awaitDecision,
    approve: (ctx: ServiceContext, id: string, receiverCustomerInfo?: Record<string, unknown>) =>
      decideByApi(ctx, id, { kind: 'approve', receiverCustomerInfo, automatic: false }),
    reject: (ctx: ServiceContext, id: string, reason?: string) => decideByApi(ctx, id, { kind: 'reject', reason }),
    /** Registers the approval jobs' handlers: the deadline and answers applied again (called from the composition root). */
    registerJobs(platformOf: (id: string) => Promise<PlatformRef | undefined>): void {
      deps.jobs.register(DEADLINE_JOB, async (job) => {
        const platform = await platformAsOfDue(job, platformOf);
        if (!platform) return;
        await transact(database.db, (trx) => decide(trx, platform, String(job.payload.transactionId), { kind: 'fail', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' }));
      });
      deps.jobs.register(ANSWER_JOB, async (job) => {
        const platform = job.platformId ? await platformOf(job.platformId) : undefined;
        if (platform) await applyAnswer(platform, String(job.payload.transactionId), job.payload.decision as WebhookApprovalDecision);
      });
    },
  };
}

export type IncomingPayments = ReturnType<typeof createIncomingPayments>;
