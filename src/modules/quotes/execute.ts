import { sql, type Expression, type SqlBool } from 'kysely';
import { commitWrites, type PlatformRef } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import type { ScheduledJob } from '../../core/jobs.js';
import { isUnmetExpectation, type Executor, type Trx } from '../../db/database.js';
import type { Clause } from '../../db/one-statement.js';
import type { Platform } from '../platform/service.js';
import type { RailPlan, RailRequest } from '../rails/rail.js';
import { railFor as defaultRailFor } from '../rails/sandbox-rail.js';
import type { TransactionStatus } from '../transactions/lifecycle.js';
import type { TransactionRecord, TransitionPatch } from '../transactions/repository.js';
import { executionLegs, quoteAccounts, type QuoteAccounts } from './legs.js';
import { firstStepJob, type QuoteOutcomes } from './outcomes.js';
import { presentQuote, quoteNotFound, refuseUnlessExecutable } from './present.js';
import * as repo from './repository.js';
import type { Delivery, QuoteRecord } from './repository.js';
import type { QuoteStatus, QuoteView } from './schemas.js';
import type { ExecuteHeaders, QuoteContext, QuoteHooks, QuoteServiceDeps } from './types.js';

/** Job that finishes an execution whose request stopped between committing and the rail call. */
export const RECOVERY_JOB = 'quote.recover';
/** How long after execution the recovery job looks (platform clock). */
export const RECOVERY_DELAY_MS = 2 * 60_000;

// Execution in three steps, like every payment that leaves through a rail: (1) one transaction
// claims the quote (PENDING → PROCESSING, guarded, so one of any number of concurrent calls
// wins), holds the legs and schedules a recovery job; (2) the rail is called outside any
// transaction; (3) what the rail reports now is applied, later steps become jobs. A simulated
// rail (the sandbox) is asked before step 1 instead, and its plan and first step's job are
// written by the claim, so steps 2 and 3 have nothing left to do.

/**
 * Quotes this process created recently, with their transactions as created, so that executing
 * one needs no read first. Only what never changes is trusted from here (ids, currencies,
 * amounts, source, delivery, expiresAt); whether the quote can still be executed, and whether
 * its transaction is still as created, is decided by the guarded claim.
 */
function createRecentQuotes(capacity = 10_000) {
  const recent = new Map<string, { quote: QuoteRecord; transaction: TransactionRecord }>();
  const key = (platformId: string, id: string) => `${platformId}|${id}`;
  return {
    remember(quote: QuoteRecord, transaction: TransactionRecord): void {
      if (recent.size >= capacity) recent.delete(recent.keys().next().value!);
      recent.set(key(quote.platformId, quote.id), { quote, transaction });
    },
    take(platformId: string, id: string) {
      const entry = recent.get(key(platformId, id));
      recent.delete(key(platformId, id));
      return entry;
    },
  };
}

export function createQuoteExecution(deps: QuoteServiceDeps, outcomes: QuoteOutcomes, hooks: QuoteHooks) {
  const { database, clock, ledger, transactions } = deps;
  const railFor = deps.railFor ?? defaultRailFor;
  const authorizer = deps.executeAuthorizer;
  const recent = createRecentQuotes();

  const statusAfterClaim = (q: QuoteRecord): QuoteStatus => (q.delivery.kind === 'INTERNAL' ? 'COMPLETED' : 'PROCESSING');
  /** Delivers UMA_ADDRESS destinations (the UMA module's handler, when it is plugged in). */
  const umaDelivery = deps.destinationHandlers?.find((h) => h.destinationType === 'UMA_ADDRESS' && h.deliver);

  function recoveryJob(q: QuoteRecord, now: Date): ScheduledJob | null {
    if (q.delivery.kind === 'INTERNAL') return null;
    return { kind: RECOVERY_JOB, payload: { quoteId: q.id }, runAt: new Date(now.getTime() + RECOVERY_DELAY_MS) };
  }

  function claimOf(platform: PlatformRef, q: QuoteRecord, now: Date, ahead: { plan: RailPlan; job: ScheduledJob } | null): repo.Claim {
    return { platform, id: q.id, to: statusAfterClaim(q), now, followUp: ahead?.job ?? recoveryJob(q, now), plan: ahead?.plan };
  }

  function payoutRequest(platform: PlatformRef, q: QuoteRecord, delivery: Extract<Delivery, { kind: 'RAIL' }>): RailRequest {
    return {
      platform,
      operation: 'QUOTE_PAYOUT',
      transactionId: q.transactionId,
      identifier: delivery.identifier,
      accountType: delivery.accountType,
      currency: q.receivingCurrency,
      amount: q.totalReceivingAmount,
    };
  }

  /**
   * A simulated rail's plan, asked for before the claim so that the claim stores it with its
   * first step's job: no recovery job, and nothing left to write after the commit. Null for a
   * real rail (called only once the claim committed), a quote no rail pays out, or a plan whose
   * first step is due at once (applied after the commit, as for a real rail).
   */
  async function planAhead(platform: PlatformRef, q: QuoteRecord, now: Date): Promise<{ plan: RailPlan; job: ScheduledJob } | null> {
    if (q.delivery.kind !== 'RAIL') return null;
    const rail = railFor(platform as Platform);
    if (!rail.simulated) return null;
    const plan = await rail.initiate(payoutRequest(platform, q, q.delivery));
    const job = firstStepJob(q.id, plan, now);
    return job && { plan, job };
  }

  /**
   * Whether the payee still exists: the external account a payout goes to may have been deleted
   * (or its customer) since the quote was made, and a deleted account is never paid.
   */
  function payeeLive(platform: PlatformRef, q: QuoteRecord): Expression<SqlBool> {
    return q.delivery.kind === 'RAIL' ? deps.externalAccounts.liveCondition(platform.id, q.delivery.externalAccountId) : sql<SqlBool>`true`;
  }

  /** Throws 404 NOT_FOUND when the payout's external account was deleted (see payeeLive). */
  async function requirePayee(ex: Executor, platform: PlatformRef, q: QuoteRecord): Promise<void> {
    if (q.delivery.kind !== 'RAIL' || (await hasPayee(ex, platform, q))) return;
    const accountId = q.delivery.externalAccountId;
    throw new ServiceError('NOT_FOUND', `the quote's destination external account ${accountId} was deleted; quote again to an account that exists`, { details: { accountId } });
  }

  async function hasPayee(ex: Executor, platform: PlatformRef, q: QuoteRecord): Promise<boolean> {
    return q.delivery.kind !== 'RAIL' || (await deps.externalAccounts.findExternalAccount(ex, platform.id, q.delivery.externalAccountId)) !== undefined;
  }

  /** Where a claimed quote's transaction goes: a payout is PROCESSING, an internal payment COMPLETED. */
  function transactionMove(platform: PlatformRef, q: QuoteRecord): { to: TransactionStatus; patch: TransitionPatch } {
    return q.delivery.kind === 'INTERNAL' ? { to: 'COMPLETED', patch: { settledAt: clock.now(platform) } } : { to: 'PROCESSING', patch: {} };
  }

  /**
   * Books the legs of a claimed quote. The ledger goes last in the transaction: it locks the
   * source account's row until commit, and a busy account serializes every payment from it, so
   * the lock should be held as briefly as possible.
   */
  async function bookLegs(trx: Trx, platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts): Promise<void> {
    await ledger.record(trx, platform, executionLegs(q, accounts, q.delivery.kind !== 'INTERNAL'), q.transactionId);
  }

  /** In the caller's transaction, for a quote just claimed: moves its transaction and books the legs. */
  async function startExecution(trx: Trx, platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts): Promise<void> {
    const { to, patch } = transactionMove(platform, q);
    await transactions.transition(trx, platform, q.transactionId, to, patch);
    await bookLegs(trx, platform, q, accounts);
  }

  /**
   * Claims a PENDING quote in `trx` and starts its execution: the claim moves the quote's
   * transaction in the same statement, then the legs are booked. When the claim fails, throws
   * the 409 that explains why (expired, or executed by someone else first).
   */
  async function claim(trx: Trx, platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts): Promise<QuoteRecord> {
    const now = clock.now(platform);
    const ahead = await planAhead(platform, q, now);
    const { to, patch } = transactionMove(platform, q);
    const move = transactions.transitionWithin(platform, q.transactionId, to, patch, repo.CLAIMED);
    const claimed = await repo.claimAndMove(trx, claimOf(platform, q, now, ahead), move.update);
    if (!claimed) {
      const current = await repo.findQuote(trx, platform.id, q.id);
      if (!current) throw quoteNotFound();
      refuseUnlessExecutable(current, now);
      throw new ServiceError('QUOTE_ALREADY_EXECUTED', 'this quote was already executed');
    }
    if (claimed.moved) await move.moved(trx, claimed.moved);
    await bookLegs(trx, platform, claimed.quote, accounts);
    return claimed.quote;
  }

  /**
   * After the claim committed: asks the rail to pay out and applies what it reports now. A rail
   * that refuses (no rail configured) fails the payment; an unexpected error leaves it
   * PROCESSING for the recovery job (rethrown when the recovery job itself is calling).
   */
  async function continueExecution(platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts, rethrow = false): Promise<QuoteRecord> {
    if (q.delivery.kind === 'UMA') return continueUmaDelivery(platform, q, accounts, rethrow);
    if (q.delivery.kind !== 'RAIL' || q.status !== 'PROCESSING' || q.railPlan) return q;
    let plan: RailPlan;
    try {
      plan = await railFor(platform as Platform).initiate(payoutRequest(platform, q, q.delivery));
    } catch (error) {
      if (error instanceof ServiceError) return outcomes.failInitiation(platform, q, 'NO_RAIL_CONFIGURED', accounts);
      if (rethrow) throw error;
      deps.log?.warn({ err: error, quoteId: q.id }, 'quote payout initiation failed; the recovery job will retry');
      return q;
    }
    return outcomes.applyPlan(platform, q, plan, accounts);
  }

  /** Like a rail payout, but the UMA handler delivers; null means "not known yet, it will resume". */
  async function continueUmaDelivery(platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts, rethrow: boolean): Promise<QuoteRecord> {
    if (q.status !== 'PROCESSING') return q;
    if (!umaDelivery?.deliver) return outcomes.failInitiation(platform, q, 'NO_RAIL_CONFIGURED', accounts);
    let plan: RailPlan | null;
    try {
      plan = await umaDelivery.deliver(platform as Platform, q);
    } catch (error) {
      if (rethrow) throw error;
      deps.log?.warn({ err: error, quoteId: q.id }, 'UMA delivery failed unexpectedly; the recovery job will retry');
      return q;
    }
    return plan ? outcomes.applyPlan(platform, q, plan, accounts) : q;
  }

  /**
   * continueExecution for a request whose claim already committed: it must not fail now (the
   * idempotency record holds the committed answer), so any error leaves the payment PROCESSING
   * for the recovery job, and the quote is returned as committed.
   */
  async function continueAfterCommit(platform: PlatformRef, q: QuoteRecord, accounts: QuoteAccounts): Promise<QuoteRecord> {
    try {
      return await continueExecution(platform, q, accounts);
    } catch (error) {
      deps.log?.error({ err: error, quoteId: q.id }, 'quote execution could not continue after its claim committed; the recovery job will finish it');
      return q;
    }
  }

  /**
   * Claims the quote, moves its transaction, books the legs and writes every event as one
   * statement, atomic without a transaction: possible when this process created the quote, so
   * that its transaction's row is known. The statement refuses as a whole (nothing written) when
   * the claim did not match, the transaction was not as known, the sender may not send or the
   * payee was deleted; null then, and the transactional path runs (and explains the refusal).
   */
  async function claimInOneStatement(ctx: QuoteContext, q: QuoteRecord, known: TransactionRecord, accounts: QuoteAccounts): Promise<QuoteRecord | null> {
    const { platform } = ctx;
    const now = clock.now(platform);
    const { to, patch } = transactionMove(platform, q);
    const allowed = q.customerId ? deps.senderGate.condition(platform as Platform, q.customerId) : sql<SqlBool>`true`;
    const move = transactions.transitionFrom(platform, known, to, patch, sql<SqlBool>`${repo.CLAIMED} and ${allowed} and ${payeeLive(platform, q)}`);
    const legs = executionLegs(q, accounts, q.delivery.kind !== 'INTERNAL');
    const booking = move && (await ledger.recordWithin(database.db, platform, legs, sql<string>`moved.id`));
    if (!move || !booking) return null;
    const claim = claimOf(platform, q, now, await planAhead(platform, q, now));
    const claimed = repo.claimedRecord(q, claim);
    const writes: Clause[] = [
      ...repo.claimClauses(claim),
      ...move,
      // A lateral call runs once per row of `moved`: not at all when nothing moved.
      { as: 'balances', query: sql`select b.* from moved cross join lateral (${booking.call}) b` },
      ...booking.writes,
    ];
    const finish = sql`select corridor_expect(exists (select 1 from moved), 'quote not claimed'), (select count(*) from balances)`;
    try {
      // The statement locks the payer's balance row: concurrent executions share a transaction
      // that takes such locks first, in order.
      await commitWrites(ctx, writes, presentQuote(claimed), { finish, batch: { kind: 'quote.execute', locks: ledger.locksOf(legs) }, provisional: true });
      return claimed;
    } catch (error) {
      if (isUnmetExpectation(error)) return null;
      throw ledger.explainError(error);
    }
  }

  /** The claim in a transaction of its own (the authorizer's check, the claim's statement, then the legs). */
  async function claimInTransaction(ctx: QuoteContext, q: QuoteRecord, accounts: QuoteAccounts, confirm?: (trx: Trx) => Promise<void>): Promise<QuoteRecord> {
    if (q.customerId) await deps.senderGate.checkId(database.db, ctx.platform, q.customerId);
    let claimed: QuoteRecord | undefined;
    await ctx.tx(async (trx) => {
      await confirm?.(trx);
      claimed = await claim(trx, ctx.platform, q, accounts);
      // After the claim, so that an expired or executed quote is told so; this undoes the claim.
      await requirePayee(trx, ctx.platform, q);
      return presentQuote(claimed);
    }, { provisional: true });
    return claimed!;
  }

  /** POST /quotes/{quoteId}/execute. */
  async function executeQuote(ctx: QuoteContext, quoteId: string, headers: ExecuteHeaders = {}): Promise<QuoteView> {
    const { platform } = ctx;
    const cached = recent.take(platform.id, quoteId);
    const q = cached?.quote ?? (await repo.findQuote(database.db, platform.id, quoteId));
    if (!q) throw quoteNotFound();
    if (q.source.sourceType === 'REALTIME_FUNDING') {
      throw new ServiceError('INVALID_INPUT', 'a real-time funded quote executes when its funds arrive (pay the paymentInstructions; POST /sandbox/send in the sandbox)');
    }
    refuseUnlessExecutable(q, clock.now(platform));
    for (const hook of hooks.beforeExecute) await hook(ctx, q);
    let confirm: ((trx: Trx) => Promise<void>) | undefined;
    if (q.debitAccountType === 'EMBEDDED_WALLET') {
      // Before the wallet is asked to sign: a sender who may not send gets 403, not a challenge.
      if (q.customerId) await deps.senderGate.checkId(database.db, platform, q.customerId);
      confirm = await authorizer.authorize(ctx, q, headers);
    }
    const accounts = await quoteAccounts(ledger, platform, q);
    // A wallet's quote is claimed in a transaction, where the signer is checked again.
    const oneStatement = cached && !confirm && (await claimInOneStatement(ctx, q, cached.transaction, accounts));
    const claimed = oneStatement || (await claimInTransaction(ctx, q, accounts, confirm));
    return presentQuote(await continueAfterCommit(platform, claimed, accounts));
  }

  /** The recovery job: initiates the payout if the executing request never got to. */
  async function recover(platform: PlatformRef, quoteId: string): Promise<void> {
    const q = await repo.findQuote(database.db, platform.id, quoteId);
    if (!q || q.status !== 'PROCESSING' || q.railPlan || q.delivery.kind === 'INTERNAL') return;
    await continueExecution(platform, q, await quoteAccounts(ledger, platform, q), true);
  }

  return { executeQuote, claim, hasPayee, startExecution, continueAfterCommit, recover, statusAfterClaim, recoveryJob, remember: recent.remember };
}

export type QuoteExecution = ReturnType<typeof createQuoteExecution>;
