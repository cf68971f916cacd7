import type { PlatformRef } from '../../core/context.js';
import { emitEvents } from '../../core/events.js';
import { enqueueJobs, type ScheduledJob } from '../../core/jobs.js';
import type { Trx } from '../../db/database.js';
import type { RailEvent, RailPlan } from '../rails/rail.js';
import { railFailureReason, type FailureDetail, type FailureReason } from '../transactions/lifecycle.js';
import type { Refund } from '../transactions/schemas.js';
import { newReference } from '../../core/ids.js';
import { heldAccounts, quoteAccounts, refundLegs, type QuoteAccounts } from './legs.js';
import * as repo from './repository.js';
import type { QuoteRecord } from './repository.js';
import type { QuoteStatus } from './schemas.js';
import type { QuoteServiceDeps } from './types.js';
import { transact } from '../../db/transact.js';

/** Job that applies the next due step of a quote's rail plan. */
export const STEP_JOB = 'quote.rail-step';

/** A step job's payload: which step of which quote, and (since it was scheduled) its event. */
export interface StepRef {
  quoteId: string;
  step: number;
  event?: RailEvent;
}

/** The job of a plan's first step, or null when that step is due at once (or there is none). */
export function firstStepJob(quoteId: string, plan: RailPlan, now: Date): ScheduledJob | null {
  const first = plan.steps[0];
  if (!first || first.afterMs <= 0) return null;
  return { kind: STEP_JOB, payload: { quoteId, step: 0, event: first.event }, runAt: new Date(now.getTime() + first.afterMs) };
}

/** Failures before any money left: the execution itself failed, nothing to refund. */
const EXECUTION_FAILURES: FailureDetail[] = ['EXECUTION_FAILED', 'NO_RAIL_CONFIGURED'];

/**
 * failureReason (the reference's outgoing enum): QUOTE_EXECUTION_FAILED when the payout never
 * started, COUNTERPARTY_POST_TX_FAILED when the receiving side failed or returned it.
 * failureDetail carries what the rail reported.
 */
export function failureReasonFor(detail: FailureDetail): FailureReason {
  return EXECUTION_FAILURES.includes(detail) ? 'QUOTE_EXECUTION_FAILED' : railFailureReason('OUTGOING');
}

export function refund(status: Refund['status'], reason: Refund['reason'], now: Date): Refund {
  return { reference: newReference('RF'), initiatedAt: now.toISOString(), ...(status === 'COMPLETED' && { settledAt: now.toISOString() }), status, reason };
}

/**
 * A failed payout whose hold was released: the sender has the money back at once. Nothing to
 * refund if it never started, unless the payer's real-time funding had already arrived: that
 * payment goes back to the payer.
 */
function refundAfterFailure(q: QuoteRecord, detail: FailureDetail, now: Date, reason?: FailureReason): Refund | null {
  const neverStarted = EXECUTION_FAILURES.includes(detail) || reason === 'QUOTE_EXECUTION_FAILED';
  if (neverStarted && q.source.sourceType !== 'REALTIME_FUNDING') return null;
  return refund('COMPLETED', detail === 'USER_CANCELLATION' ? 'USER_CANCELLATION' : 'TRANSACTION_FAILED', now);
}

/**
 * What rail events do to a quote, its transaction and its ledger legs. Each event applies at
 * most once: the quote's status moves with a guarded update, and a step whose quote is no
 * longer in the expected status changes nothing.
 */
export function createQuoteOutcomes(deps: QuoteServiceDeps) {
  const { database, clock, ledger, transactions } = deps;

  async function failTransaction(trx: Trx, platform: PlatformRef, q: QuoteRecord, reason: FailureReason, detail: FailureDetail | null, refunded: Refund | null) {
    const record = await transactions.transition(trx, platform, q.transactionId, 'FAILED', {
      failureReason: reason,
      failureDetail: detail,
      ...(refunded && { refund: refunded }),
    });
    if (!record || !refunded) return;
    const type = refunded.status === 'FAILED' ? 'OUTGOING_PAYMENT.REFUND_FAILED' : 'OUTGOING_PAYMENT.REFUND_COMPLETED';
    await emitEvents(trx, platform, [{ type, data: transactions.present(record, platform.id) }], clock);
  }

  async function applyMoved(trx: Trx, platform: PlatformRef, q: QuoteRecord, event: RailEvent, accounts: QuoteAccounts | null): Promise<void> {
    const now = clock.now(platform);
    const transactionId = q.transactionId;
    // The ledger call comes last in each case: it locks the source account's row until commit.
    switch (event.kind) {
      case 'COMPLETED':
        await transactions.transition(trx, platform, transactionId, 'COMPLETED', { settledAt: now });
        await ledger.resolve(trx, platform, { transactionId, accounts: heldAccounts([q]) }, 'POST');
        return;
      case 'FAILED':
        await failTransaction(trx, platform, q, event.reason ?? failureReasonFor(event.detail), event.detail, refundAfterFailure(q, event.detail, now, event.reason));
        await ledger.resolve(trx, platform, { transactionId, accounts: heldAccounts([q]) }, 'VOID');
        return;
      case 'RETURNED': {
        if (!accounts) throw new Error('a returned payout needs its ledger accounts');
        const legs = refundLegs(q, accounts);
        // Credits to the sender since the payment may leave its balance no room under the limit:
        // then the refund fails, as when the rail cannot refund, and nothing is credited.
        const refunded = (await ledger.fitsUnderLimit(trx, legs)) ? refund('COMPLETED', 'TRANSACTION_FAILED', now) : refund('FAILED', 'TRANSACTION_FAILED', now);
        await failTransaction(trx, platform, q, railFailureReason('OUTGOING'), 'RETURNED_BY_RECEIVING_BANK', refunded);
        if (refunded.status === 'COMPLETED') await ledger.record(trx, platform, legs, transactionId);
        return;
      }
      case 'REFUND_FAILED':
        // The payout left and never came back: the money is gone, so the holds post.
        await failTransaction(trx, platform, q, railFailureReason('OUTGOING'), event.detail, refund('FAILED', 'TRANSACTION_FAILED', now));
        await ledger.resolve(trx, platform, { transactionId, accounts: heldAccounts([q]) }, 'POST');
        return;
    }
  }

  const fromStatus = (event: RailEvent): QuoteStatus => (event.kind === 'RETURNED' ? 'COMPLETED' : 'PROCESSING');
  const toStatus = (event: RailEvent): QuoteStatus => (event.kind === 'COMPLETED' ? 'COMPLETED' : 'FAILED');
  /** Only a return books new legs (the refund), so only it needs the ledger accounts. */
  const needsAccounts = (event: RailEvent) => event.kind === 'RETURNED';

  /** Applies one event; `nextStep` is stored whether or not the event still applied. */
  async function apply(trx: Trx, platform: PlatformRef, q: QuoteRecord, event: RailEvent, accounts: QuoteAccounts, nextStep: number): Promise<QuoteRecord> {
    const now = clock.now(platform);
    const moved = await repo.moveQuote(trx, platform.id, q.id, [fromStatus(event)], toStatus(event), now, { nextStep });
    if (!moved) {
      await repo.setNextStep(trx, platform.id, q.id, nextStep, now);
      return { ...q, nextStep };
    }
    await applyMoved(trx, platform, moved, event, accounts);
    return moved;
  }

  function stepJob(q: QuoteRecord, index: number, runAt: Date) {
    const event = q.railPlan!.steps[index].event;
    return { kind: STEP_JOB, payload: { quoteId: q.id, step: index, event }, runAt };
  }

  /**
   * Applies every step that is due, in order; schedules a job for the first one that is not (or
   * that needs ledger accounts the caller could not provide inside its transaction).
   */
  async function advance(trx: Trx, platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts | null): Promise<QuoteRecord> {
    const steps = q.railPlan?.steps ?? [];
    const start = (q.railInitiatedAt ?? clock.now(platform)).getTime();
    const now = clock.now(platform).getTime();
    let current = q;
    while (current.nextStep < steps.length) {
      const index = current.nextStep;
      const dueAt = start + steps[index].afterMs;
      if (dueAt > now || (!accounts && needsAccounts(steps[index].event))) {
        await enqueueJobs(trx, platform, [stepJob(current, index, new Date(dueAt))], clock);
        break;
      }
      current = await apply(trx, platform, current, steps[index].event, accounts!, index + 1);
    }
    return current;
  }

  /**
   * Records what the rail will do and does what is due now. The usual case, nothing due yet, is
   * one statement (plan + first step's job); a quote whose plan is already stored (initiated
   * twice, by a slow request and the recovery job) is left alone.
   */
  async function applyPlan(platform: PlatformRef, q: QuoteRecord, plan: RailPlan, accounts: QuoteAccounts): Promise<QuoteRecord> {
    const now = clock.now(platform);
    const job = firstStepJob(q.id, plan, now);
    if (job) {
      if (await repo.recordRailPlanAndSchedule(database.db, platform, q.id, plan, now, job)) return { ...q, railPlan: plan, railInitiatedAt: now, nextStep: 0 };
      return (await repo.findQuote(database.db, platform.id, q.id)) ?? q;
    }
    return transact(database.db, async (trx) => {
      const planned = await repo.recordRailPlan(trx, platform.id, q.id, plan, now);
      if (!planned) return (await repo.findQuote(trx, platform.id, q.id)) ?? q;
      return advance(trx, platform, planned, accounts);
    });
  }

  /**
   * The usual step: one guarded update moves the quote (only if this is still its next step),
   * then the ledger and the transaction follow, without reading the quote first. False when the
   * quote was not where the job expected it.
   */
  async function applyStepDirectly(platform: PlatformRef, quoteId: string, step: number, event: RailEvent): Promise<boolean> {
    return transact(database.db, async (trx) => {
      const now = clock.now(platform);
      const moved = await repo.moveQuote(trx, platform.id, quoteId, [fromStatus(event)], toStatus(event), now, { nextStep: step + 1, atStep: step });
      if (!moved) return false;
      await applyMoved(trx, platform, moved, event, null);
      await advance(trx, platform, moved, null);
      return true;
    });
  }

  /** The job of one step: applies it (and whatever else is due) unless another run already did. */
  async function runStep(platform: PlatformRef, quoteId: string, step: number, event?: RailEvent): Promise<void> {
    if (event && !needsAccounts(event) && (await applyStepDirectly(platform, quoteId, step, event))) return;
    const q = await repo.findQuote(database.db, platform.id, quoteId);
    if (!q || q.nextStep !== step || !q.railPlan) return;
    const accounts = await quoteAccounts(ledger, platform, q);
    await transact(database.db, async (trx) => {
      const locked = await repo.findQuote(trx, platform.id, quoteId, true);
      if (locked && locked.nextStep === step) await advance(trx, platform, locked, accounts);
    });
  }

  /**
   * Completions due at the same time, settled together: one transaction, one update for the
   * quotes, one for their transactions and one ledger call that posts all their holds (what
   * `applyStepDirectly` does for one). Returns the steps it applied; the caller runs the rest
   * (steps whose quote had moved on) one by one.
   */
  async function settleCompletions(platform: PlatformRef, steps: StepRef[]): Promise<StepRef[]> {
    return transact(database.db, async (trx) => {
      const now = clock.now(platform);
      const moved = await repo.moveQuotesAtSteps(trx, platform.id, steps, ['PROCESSING'], 'COMPLETED', now);
      if (moved.length === 0) return [];
      const transactionIds = moved.map((q) => q.transactionId);
      await transactions.transitionAll(trx, platform, transactionIds, 'COMPLETED', { settledAt: now });
      await ledger.resolve(trx, platform, { transactionIds, accounts: heldAccounts(moved) }, 'POST');
      for (const q of moved) await advance(trx, platform, q, null);
      const applied = new Set(moved.map((q) => `${q.id}|${q.nextStep - 1}`));
      return steps.filter((s) => applied.has(`${s.quoteId}|${s.step}`));
    });
  }

  /**
   * The jobs of several steps claimed together: completions settle in one transaction, every
   * other step (failures, returns, completions whose quote moved on) runs as its own `runStep`.
   */
  async function runSteps(platform: PlatformRef, steps: StepRef[]): Promise<void> {
    const completions = steps.filter((s) => s.event?.kind === 'COMPLETED');
    const settled = new Set(completions.length > 1 ? await settleCompletions(platform, completions) : []);
    await Promise.all(steps.filter((s) => !settled.has(s)).map((s) => runStep(platform, s.quoteId, s.step, s.event)));
  }

  return {
    applyPlan,
    runStep,
    runSteps,
    failTransaction,
    /** The rail refused to start the payout: fail it now, releasing the holds. */
    failInitiation: (platform: PlatformRef, q: QuoteRecord, detail: FailureDetail, accounts: QuoteAccounts) =>
      applyPlan(platform, q, { steps: [{ afterMs: 0, event: { kind: 'FAILED', detail } }] }, accounts),
  };
}

export type QuoteOutcomes = ReturnType<typeof createQuoteOutcomes>;
