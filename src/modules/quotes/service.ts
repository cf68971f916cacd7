import type { PlatformRef } from '../../core/context.js';
import { groupBy } from '../../core/collections.js';
import { platformAsOfDue, type ClaimedJob, type JobRunner } from '../../core/jobs.js';
import { createQuoteCreation } from './create.js';
import { accountDestinations, umaDestinationsUnavailable } from './destinations.js';
import { createQuoteExecution, RECOVERY_JOB } from './execute.js';
import { createExpirySweep, EXPIRY_JOB } from './expiry.js';
import { createSandboxFunding } from './funding.js';
import { createLookups } from './lookup.js';
import { createQuoteOutcomes, STEP_JOB, type StepRef } from './outcomes.js';
import { presentQuote, quoteNotFound } from './present.js';
import type { RailEvent } from '../rails/rail.js';
import * as repo from './repository.js';
import type { QuoteView } from './schemas.js';
import type { QuoteContext, QuoteDestinationHandler, QuoteHooks, QuoteServiceDeps } from './types.js';
import type { Executor } from '../../db/database.js';

export type { ExecuteAuthorizer, QuoteDestinationHandler, QuoteServiceDeps } from './types.js';
export { payloadToSignOf } from './funding.js';

/**
 * Quotes: a locked price for one payment, its execution through the ledger and the rail, the
 * sandbox's real-time funding, and receiver lookups. Lifecycle and ledger legs are described in
 * docs/api/quotes.md.
 */
export function createQuoteService(deps: QuoteServiceDeps) {
  const { database } = deps;
  const hooks: QuoteHooks = { beforeExecute: [] };
  const handlers = new Map<string, QuoteDestinationHandler>();
  for (const handler of [accountDestinations(deps), umaDestinationsUnavailable, ...(deps.destinationHandlers ?? [])]) {
    handlers.set(handler.destinationType, handler);
  }
  const outcomes = createQuoteOutcomes(deps);
  const execution = createQuoteExecution(deps, outcomes, hooks);
  const creation = createQuoteCreation(deps, execution, handlers);
  const funding = createSandboxFunding(deps, execution, outcomes);
  const lookups = createLookups(deps);
  const sweepExpired = createExpirySweep(deps);

  /** `scope` narrows who may see it: one customer's quotes, or the quotes one agent created. */
  async function getQuote(ctx: QuoteContext, id: string, scope: { customerId?: string; agentId?: string } = {}): Promise<QuoteView> {
    const q = await repo.findQuote(database.db, ctx.platform.id, id);
    if (!q || (scope.customerId && q.customerId !== scope.customerId) || (scope.agentId && q.agentId !== scope.agentId)) throw quoteNotFound();
    return presentQuote(q);
  }

  /** Registers the quote jobs (expiry, rail steps, recovery) with the runner. */
  function registerJobs(jobs: JobRunner, platformOf: (id: string) => Promise<PlatformRef | undefined>): void {
    const withPlatform = (run: (platform: PlatformRef, job: ClaimedJob) => Promise<void>) => async (job: ClaimedJob) => {
      const platform = await platformAsOfDue(job, platformOf);
      if (platform) await run(platform, job);
    };
    // A batch's jobs share one due-time window, so the first one's time stands for the group's.
    const byPlatform = (run: (platform: PlatformRef, group: ClaimedJob[]) => Promise<void>) => async (batch: ClaimedJob[]) => {
      await Promise.all(
        [...groupBy(batch, (job) => job.platformId)].map(async ([, group]) => {
          const platform = await platformAsOfDue(group[0], platformOf);
          if (platform) await run(platform, group);
        }),
      );
    };
    // Jobs scheduled per quote by an earlier version carry the quote's expiresAt instead.
    const untilOf = (job: ClaimedJob) => new Date(String(job.payload.until ?? job.payload.expiresAt));
    const expireAll = byPlatform((platform, group) => sweepExpired(platform, group.map(untilOf)));
    jobs.register(EXPIRY_JOB, (job) => expireAll([job]));
    jobs.registerBatch(EXPIRY_JOB, expireAll);
    const stepOf = (job: ClaimedJob): StepRef => ({ quoteId: String(job.payload.quoteId), step: Number(job.payload.step), event: job.payload.event as RailEvent | undefined });
    jobs.register(
      STEP_JOB,
      withPlatform((platform, job) => {
        const { quoteId, step, event } = stepOf(job);
        return outcomes.runStep(platform, quoteId, step, event);
      }),
    );
    jobs.registerBatch(STEP_JOB, byPlatform((platform, group) => outcomes.runSteps(platform, group.map(stepOf))));
    // Recovery asks the destination again now, in real time, not as of when the job fell due.
    jobs.register(RECOVERY_JOB, async (job) => {
      const platform = job.platformId ? await platformOf(job.platformId) : undefined;
      if (platform) await execution.recover(platform, String(job.payload.quoteId));
    });
  }

  return {
    hooks,
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
