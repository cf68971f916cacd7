import type { PlatformRef } from '../../core/context.js';
import { groupBy } from '../../core/collections.js';
import { enqueueJobs, type ClaimedJob, type JobRunner } from '../../core/jobs.js';
import { createQuoteCreation, EXPIRY_JOB } from './create.js';
import { accountDestinations, umaDestinationsUnavailable } from './destinations.js';
import { createQuoteExecution, RECOVERY_JOB } from './execute.js';
import { createSandboxFunding } from './funding.js';
import { createLookups } from './lookup.js';
import { createQuoteOutcomes, STEP_JOB, type StepRef } from './outcomes.js';
import { presentQuote, quoteNotFound } from './present.js';
import type { RailEvent } from '../rails/rail.js';
import * as repo from './repository.js';
import type { QuoteView } from './schemas.js';
import type { QuoteContext, QuoteDestinationHandler, QuoteServiceDeps } from './types.js';
import { transact } from '../../db/transact.js';
import type { Executor } from '../../db/database.js';

export type { ExecuteAuthorizer, QuoteDestinationHandler, QuoteServiceDeps } from './types.js';
export { payloadToSignOf } from './funding.js';

/**
 * Quotes: a locked price for one payment, its execution through the ledger and the rail, the
 * sandbox's real-time funding, and receiver lookups. Lifecycle and ledger legs are described in
 * docs/api/quotes.md.
 */
export function createQuoteService(deps: QuoteServiceDeps) {
  const { database, clock, transactions } = deps;
  const handlers = new Map<string, QuoteDestinationHandler>();
  for (const handler of [accountDestinations(deps), umaDestinationsUnavailable, ...(deps.destinationHandlers ?? [])]) {
    handlers.set(handler.destinationType, handler);
  }
  const outcomes = createQuoteOutcomes(deps);
  const execution = createQuoteExecution(deps, outcomes);
  const creation = createQuoteCreation(deps, execution, handlers);
  const funding = createSandboxFunding(deps, execution, outcomes);
  const lookups = createLookups(deps);

  /** `scope` narrows who may see it: one customer's quotes, or the quotes one agent created. */
  async function getQuote(ctx: QuoteContext, id: string, scope: { customerId?: string; agentId?: string } = {}): Promise<QuoteView> {
    const q = await repo.findQuote(database.db, ctx.platform.id, id);
    if (!q || (scope.customerId && q.customerId !== scope.customerId) || (scope.agentId && q.agentId !== scope.agentId)) throw quoteNotFound();
    return presentQuote(q);
  }

  /**
   * The expiry job: an unexecuted quote (and its transaction) becomes EXPIRED at expiresAt. A job
   * that runs early (clock skew between processes) looks again at expiresAt.
   */
  async function expire(platform: PlatformRef, quoteId: string, expiresAt: Date): Promise<void> {
    await transact(database.db, async (trx) => {
      const now = clock.now(platform);
      if (now < expiresAt) {
        await enqueueJobs(trx, platform, [{ kind: EXPIRY_JOB, payload: { quoteId, expiresAt: expiresAt.toISOString() }, runAt: expiresAt }], clock);
        return;
      }
      const expired = await repo.moveQuote(trx, platform.id, quoteId, ['PENDING'], 'EXPIRED', now, { expiresBefore: now });
      if (expired) await transactions.transition(trx, platform, expired.transactionId, 'EXPIRED', { failureReason: 'QUOTE_EXPIRED' });
    });
  }

  /** Registers the quote jobs (expiry, rail steps, recovery) with the runner. */
  function registerJobs(jobs: JobRunner, platformOf: (id: string) => Promise<PlatformRef | undefined>): void {
    const withPlatform = (run: (platform: PlatformRef, job: ClaimedJob) => Promise<void>) => async (job: ClaimedJob) => {
      const platform = job.platformId ? await platformOf(job.platformId) : undefined;
      if (platform) await run(platform, job);
    };
    jobs.register(EXPIRY_JOB, withPlatform((platform, job) => expire(platform, String(job.payload.quoteId), new Date(String(job.payload.expiresAt ?? 0)))));
    const stepOf = (job: ClaimedJob): StepRef => ({ quoteId: String(job.payload.quoteId), step: Number(job.payload.step), event: job.payload.event as RailEvent | undefined });
    jobs.register(
      STEP_JOB,
      withPlatform((platform, job) => {
        const { quoteId, step, event } = stepOf(job);
        return outcomes.runStep(platform, quoteId, step, event);
      }),
    );
    jobs.registerBatch(STEP_JOB, async (batch) => {
      await Promise.all(
        [...groupBy(batch, (job) => job.platformId)].map(async ([platformId, group]) => {
          const platform = platformId ? await platformOf(platformId) : undefined;
          if (platform) await outcomes.runSteps(platform, group.map(stepOf));
        }),
      );
    });
    jobs.register(RECOVERY_JOB, withPlatform((platform, job) => execution.recover(platform, String(job.payload.quoteId))));
  }

  return {
    createQuote: creation.createQuote,
    executeQuote: execution.executeQuote,
    getQuote,
    sandboxSend: funding.sandboxSend,
    lookupExternalAccount: lookups.lookupExternalAccount,
    /** Stores a lookup another module made (UMA), so quotes can use its lookupId. */
    recordLookup: (ex: Executor, lookup: repo.LookupRecord) => repo.insertLookup(ex, lookup),
    /** Asks a destination handler again about an executed quote it reported as not settled yet. */
    resumeDelivery: (platform: PlatformRef, quoteId: string) => execution.recover(platform, quoteId),
    registerJobs,
  };
}

export type QuoteService = ReturnType<typeof createQuoteService>;
