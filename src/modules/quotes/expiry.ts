import type { PlatformRef } from '../../core/context.js';
import { enqueueJobs, type ScheduledJob } from '../../core/jobs.js';
import { transact } from '../../db/transact.js';
import * as repo from './repository.js';
import type { QuoteServiceDeps } from './types.js';

/**
 * Job that expires a platform's unexecuted quotes due by the time it runs. One is scheduled per
 * platform and second of `expiresAt` (payload `until`, the end of that second), not one per
 * quote: most quotes are executed, and a job per quote would be claimed and run five minutes
 * later to find nothing to do.
 */
export const EXPIRY_JOB = 'quote.expire';

const SECOND_MS = 1000;
/** Quotes expired per transaction of a sweep. */
export const SWEEP_CHUNK = 500;

const expiryJob = (until: Date): ScheduledJob => ({ kind: EXPIRY_JOB, payload: { until: until.toISOString() }, runAt: until });

/**
 * Which expiry jobs this process knows are committed, per platform and second. A quote whose
 * second already has one adds no job; until one has committed, every quote of that second
 * brings its own (concurrent first quotes may add a few duplicates, which sweep nothing). The
 * map forgets its oldest seconds first; forgetting one only costs a duplicate job.
 */
export function createExpirySchedule(capacity = 10_000) {
  const committed = new Set<string>();
  const secondOf = (expiresAt: Date) => new Date(Math.ceil(expiresAt.getTime() / SECOND_MS) * SECOND_MS);
  const key = (platformId: string, until: Date) => `${platformId}|${until.getTime()}`;
  return {
    /** The job the quote must bring, if its second has none committed yet. */
    jobsFor(platformId: string, expiresAt: Date): ScheduledJob[] {
      const until = secondOf(expiresAt);
      return committed.has(key(platformId, until)) ? [] : [expiryJob(until)];
    },
    /** Called once the quote's statement committed, with the jobs it brought. */
    committed(platformId: string, jobs: ScheduledJob[]): void {
      for (const job of jobs) {
        if (committed.size >= capacity) committed.delete(committed.values().next().value!);
        committed.add(key(platformId, job.runAt));
      }
    },
  };
}

/**
 * Runs expiry jobs of one platform (claimed together): its quotes still PENDING past
 * `expiresAt` (on its clock), and their transactions, become EXPIRED, SWEEP_CHUNK at a time,
 * each chunk one transaction. A job that runs before its `until` (another process's clock) is
 * scheduled again for it.
 */
export function createExpirySweep(deps: Pick<QuoteServiceDeps, 'database' | 'clock' | 'transactions'>) {
  const { database, clock, transactions } = deps;

  async function expireChunk(platform: PlatformRef, now: Date): Promise<number> {
    return transact(database.db, async (trx) => {
      const expired = await repo.expireDueQuotes(trx, platform.id, now, SWEEP_CHUNK);
      await transactions.transitionAll(trx, platform, expired.map((q) => q.transactionId), 'EXPIRED', { failureReason: 'QUOTE_EXPIRED' });
      return expired.length;
    });
  }

  return async function sweep(platform: PlatformRef, untils: Date[]): Promise<void> {
    const now = clock.now(platform);
    while ((await expireChunk(platform, now)) === SWEEP_CHUNK);
    const early = [...new Set(untils.filter((until) => now < until).map((until) => until.getTime()))];
    if (early.length === 0) return;
    await transact(database.db, (trx) => enqueueJobs(trx, platform, early.map((ms) => expiryJob(new Date(ms))), clock));
  };
}
