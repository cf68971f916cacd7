import { sql, type ExpressionBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { Database, Executor } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { literalLimit } from '../db/database.js';
import type { Clock, ClockSubject } from './clock.js';
import { groupBy } from './collections.js';
import { addToOutbox, type JobRow } from './outbox.js';
import { PollFailures } from './poll-failures.js';

declare module '../db/schema.js' {
  interface DB {
    jobs: {
      id: import('kysely').Generated<number>;
      platform_id: string | null;
      kind: string;
      payload: unknown;
      due_at: Date;
      attempts: import('kysely').Generated<number>;
      max_attempts: import('kysely').Generated<number>;
      locked_until: Date | null;
      last_error: string | null;
      dead_at: Date | null;
      created_at: import('kysely').Generated<Date>;
    };
  }
}

export interface JobSpec {
  kind: string;
  payload?: Record<string, unknown>;
  /** When the job is due, in the platform's clock. Default: now. */
  runAt?: Date;
  maxAttempts?: number;
}

export interface ClaimedJob {
  id: number;
  platformId: string | null;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
  maxAttempts: number;
  /**
   * How long before its claim the job's due-time window ended (see DUE_WINDOW_MS): what a job does
   * is stamped as of that time (`platformAsOfDue`), not of the clock after the advance that made it due.
   */
  lateMs: number;
}

export type JobHandler = (job: ClaimedJob) => Promise<void>;
/** Runs several claimed jobs of one kind together; throwing sends each back to the one-job handler. */
export type JobBatchHandler = (jobs: ClaimedJob[]) => Promise<void>;

/** A platform (or null for system jobs) as far as scheduling needs it. */
export interface JobOwner extends ClockSubject {
  id: string;
}

/** A job whose due time is known (in the owner's clock). */
export type ScheduledJob = JobSpec & { runAt: Date };

/**
 * The row of a scheduled job. Its due time stays on the owner's clock: the insert makes it real
 * time with the offset the database holds (`realDueAt`), not the one of `owner`, which may be a
 * copy from before another process advanced the clock.
 */
export function jobRow(owner: Pick<JobOwner, 'id'> | null, job: ScheduledJob): JobRow {
  return {
    platform_id: owner?.id ?? null,
    kind: job.kind,
    payload: JSON.stringify(job.payload ?? {}),
    run_at: job.runAt,
    max_attempts: job.maxAttempts ?? 10,
  };
}

/** Job rows for these specs (a spec without a due time is due now). */
export function jobRows(owner: JobOwner | null, specs: JobSpec[], clock: Clock): JobRow[] {
  return specs.map((spec) => jobRow(owner, { ...spec, runAt: spec.runAt ?? clock.now(owner) }));
}

/**
 * Adds jobs in the caller's transaction, so a job exists exactly when the state change that
 * caused it committed.
 */
export async function enqueueJobs(ex: Executor, owner: JobOwner | null, specs: JobSpec[], clock: Clock): Promise<void> {
  if (specs.length === 0) return;
  await addToOutbox(ex, { jobs: jobRows(owner, specs, clock) });
}

/** Moves a platform's pending jobs earlier by `ms`, as its test clock moves forward. */
export async function shiftPlatformJobs(ex: Executor, platformId: string, ms: number): Promise<void> {
  await ex
    .updateTable('jobs')
    .set({ due_at: sql`due_at - ${ms} * interval '1 millisecond'` })
    .where('platform_id', '=', platformId)
    .where('dead_at', 'is', null)
    .execute();
}

const LEASE_MS = 60_000;

/**
 * Claimed jobs due within this of the first of them run as of the same time, the last of their
 * due times: jobs that one clock advance made due run as of their own due times (to within this),
 * while jobs that fall due close together, as under load, still batch.
 */
const DUE_WINDOW_MS = 1000;

/** Each job's `lateMs`: `nowMs` less the last due time of its window (jobs in the same window share it). */
function latenessByWindow(due: { id: number; dueMs: number }[], nowMs: number): Map<number, number> {
  const sorted = [...due].sort((a, b) => a.dueMs - b.dueMs);
  const lateness = new Map<number, number>();
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1].dueMs - sorted[start].dueMs <= DUE_WINDOW_MS) end++;
    const late = Math.max(0, nowMs - sorted[end].dueMs);
    for (let i = start; i <= end; i++) lateness.set(sorted[i].id, late);
    start = end + 1;
  }
  return lateness;
}

/**
 * The job's platform with its clock reading the job's due time (see `ClaimedJob.lateMs`), so that
 * what the job records (`settledAt`, `updatedAt`, event timestamps) and schedules next counts from
 * when it fell due. Undefined for a system job or a platform that is gone.
 */
export async function platformAsOfDue<P extends ClockSubject>(job: ClaimedJob, platformOf: (id: string) => Promise<P | undefined>): Promise<P | undefined> {
  const platform = job.platformId ? await platformOf(job.platformId) : undefined;
  return platform && job.lateMs > 0 ? { ...platform, clockOffsetMs: platform.clockOffsetMs - job.lateMs } : platform;
}

/** The claimed jobs still held under this claim: `attempts` is the claim's fencing token. */
function ofThisClaim(jobs: ClaimedJob[]) {
  return (eb: ExpressionBuilder<DB, 'jobs'>) => eb(eb.refTuple('id', 'attempts'), 'in', jobs.map((job) => eb.tuple(job.id, job.attempts)));
}

/**
 * Makes every leased job claimable again. Only for a database no other process can be using
 * (see `releaseDeadLeases`): a live runner's job would run twice.
 */
export async function releaseJobLeases(ex: Executor): Promise<void> {
  await ex.updateTable('jobs').set({ locked_until: null }).where('locked_until', 'is not', null).execute();
}
const MAX_BACKOFF_MS = 30 * 60_000;

export function retryDelayMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempt - 1));
}

export interface JobRunnerOptions {
  database: Database;
  clock: Clock;
  log: Logger;
  pollIntervalMs?: number;
  /** How long a claim holds its jobs; renewed while they run, so only a dead or stuck process loses them. */
  leaseMs?: number;
  /** Jobs claimed per round when the previous round found fewer due. */
  batchSize?: number;
  /** The most a round claims: a round that claims all it asked for asks for twice as many next. */
  maxBatchSize?: number;
  /**
   * Told, before a round's handlers run, the clock offset each of its platforms has in the
   * database as the claim read it: a process's cached copy of a platform may be from before
   * another process advanced its clock, and the handlers would run on the clock before it.
   */
  clockSeen?: (platformId: string, clockOffsetMs: number) => void;
}

/**
 * The durable job runner: claims due jobs with FOR UPDATE SKIP LOCKED under a lease, runs their
 * handler, deletes them on success and retries with capped exponential backoff on failure.
 * Handlers must be idempotent: a crash after the work but before the delete runs them again.
 */
export class JobRunner {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly batchHandlers = new Map<string, JobBatchHandler>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** Rounds in flight (the poller's and callers'), with the platforms whose jobs each runs. */
  private readonly rounds = new Set<{ platforms: Set<string | null>; settled: Promise<unknown> }>();
  private stopped = true;
  /** Set by `stop()`: rounds in flight end after their current round. */
  private stopping = false;
  private readonly pollIntervalMs: number;
  /** Logs and paces polls that fail (the database down): one line a minute, backing off to 5 s. */
  private readonly pollFailures: PollFailures;
  private readonly batchSize: number;
  private readonly maxBatchSize: number;
  private readonly leaseMs: number;

  constructor(private readonly options: JobRunnerOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.pollFailures = new PollFailures(options.log, 'job poll', this.pollIntervalMs);
    this.batchSize = options.batchSize ?? 20;
    this.maxBatchSize = Math.max(this.batchSize, options.maxBatchSize ?? this.batchSize * 8);
    this.leaseMs = options.leaseMs ?? LEASE_MS;
  }

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job handler ${kind} registered twice`);
    this.handlers.set(kind, handler);
  }

  /**
   * Lets jobs of `kind` claimed in the same round run together (several in one database
   * transaction, say). The one-job handler stays the fallback: when the batch handler throws,
   * each of its jobs runs alone, so a batch handler must leave work it did not finish to be
   * redone idempotently.
   */
  registerBatch(kind: string, handler: JobBatchHandler): void {
    if (!this.handlers.has(kind)) throw new Error(`job kind ${kind} needs its one-job handler before a batch handler`);
    this.batchHandlers.set(kind, handler);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runDue()
        .then(() => this.pollFailures.succeeded(), (error) => this.pollFailures.failed(error))
        .then((nextMs) => this.schedule(nextMs));
    }, delayMs);
    this.timer.unref();
  }

  /**
   * Runs every job that is due now (optionally only one platform's), including jobs that
   * those jobs schedule for a time already reached. Bounded so a self-rescheduling job cannot
   * spin forever. Returns the number of jobs run.
   *
   * A round costs about three round trips whatever its size, and under load each waits behind
   * requests for a connection, so rounds of a fixed size fall behind once jobs arrive faster than
   * a few hundred a second. A full round therefore doubles the next one (up to `maxBatchSize`),
   * and a backlog drains in larger batches; a round with room to spare goes back to `batchSize`.
   */
  async runDue(platformId?: string, maxRounds = 50): Promise<number> {
    let total = 0;
    let size = this.batchSize;
    // A stopping runner finishes the round it is in, not the backlog.
    for (let round = 0; round < maxRounds && !this.stopping; round++) {
      const jobs = await this.claim(size, platformId);
      if (jobs.length === 0) break;
      size = jobs.length === size ? Math.min(size * 2, this.maxBatchSize) : this.batchSize;
      await this.runRound(jobs);
      total += jobs.length;
    }
    return total;
  }

  private async runRound(jobs: ClaimedJob[]): Promise<void> {
    const work = (async () => {
      const done = await this.executeAll(jobs);
      const succeeded = jobs.filter((job) => done.has(job));
      if (succeeded.length > 0) await this.options.database.db.deleteFrom('jobs').where(ofThisClaim(succeeded)).execute();
    })();
    const round = { platforms: new Set(jobs.map((job) => job.platformId)), settled: work.catch(() => {}) };
    this.rounds.add(round);
    const renewal = setInterval(() => void this.renewLeases(jobs), this.leaseMs / 3);
    renewal.unref();
    try {
      await work;
    } finally {
      clearInterval(renewal);
      this.rounds.delete(round);
    }
  }

  /**
   * Extends the lease of a round's jobs while they run (those that failed already are released and
   * stay so), so that a long round is not claimed again by another process and run beside it.
   */
  private async renewLeases(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.options.database.db
        .updateTable('jobs')
        .set({ locked_until: new Date(this.options.clock.realNowMs() + this.leaseMs) })
        .where(ofThisClaim(jobs))
        .where('locked_until', 'is not', null)
        .execute();
    } catch (error) {
      this.options.log.warn({ jobs: jobs.length, err: error }, 'job lease renewal failed');
    }
  }

  /** Settles when the rounds now in flight that run jobs of this platform have ended. */
  private roundsOf(platformId: string): Promise<unknown> {
    return Promise.all([...this.rounds].filter((round) => round.platforms.has(platformId)).map((round) => round.settled));
  }

  /**
   * Runs the platform's due jobs for a caller that must see them done (the sandbox clock). The
   * poller may be running some of them (leased, so `runDue` skips them) and scheduling more from
   * them, so this waits for the rounds in flight that hold jobs of this platform, not the poller's
   * whole pass (another platform's long job would hold the answer), and runs again until nothing
   * of the platform is due. Bounded: a job leased by another process finishes there.
   */
  async runDueSettled(platformId: string, maxRounds = 5): Promise<number> {
    let total = 0;
    for (let round = 0; round < maxRounds; round++) {
      await this.roundsOf(platformId);
      total += await this.runDue(platformId);
      await this.roundsOf(platformId);
      if (!(await this.hasDue(platformId))) break;
    }
    return total;
  }

  private async hasDue(platformId: string): Promise<boolean> {
    const now = new Date(this.options.clock.realNowMs());
    const due = await this.options.database.db
      .selectFrom('jobs')
      .select('id')
      .where('platform_id', '=', platformId)
      .where('due_at', '<=', now)
      .where('dead_at', 'is', null)
      .limit(1)
      .executeTakeFirst();
    return due !== undefined;
  }

  private async claim(size: number, platformId?: string): Promise<ClaimedJob[]> {
    const { db } = this.options.database;
    const nowMs = this.options.clock.realNowMs();
    const now = new Date(nowMs);
    const rows = await db
      .updateTable('jobs')
      .set({
        locked_until: new Date(nowMs + this.leaseMs),
        attempts: sql`attempts + 1`,
      })
      .where('id', 'in', (qb) => {
        let due = qb
          .selectFrom('jobs')
          .select('id')
          .where('due_at', '<=', now)
          .where('dead_at', 'is', null)
          .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]));
        if (platformId) due = due.where('platform_id', '=', platformId);
        return due.orderBy('due_at').limit(literalLimit(size)).forUpdate().skipLocked();
      })
      .returning(['id', 'platform_id', 'kind', 'payload', 'attempts', 'max_attempts', 'due_at'])
      .returning(sql<number | null>`(select clock_offset_ms from platforms where platforms.id = jobs.platform_id)`.as('clock_offset_ms'))
      .execute();
    for (const r of rows) if (r.platform_id && r.clock_offset_ms !== null) this.options.clockSeen?.(r.platform_id, Number(r.clock_offset_ms));
    const lateness = latenessByWindow(rows.map((r) => ({ id: r.id, dueMs: new Date(r.due_at).getTime() })), nowMs);
    return rows.map((r) => ({
      id: r.id,
      platformId: r.platform_id,
      kind: r.kind,
      payload: (r.payload ?? {}) as Record<string, unknown>,
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      lateMs: lateness.get(r.id)!,
    }));
  }

  /**
   * Runs claimed jobs, batches (of one kind and one due-time window) where a kind has a batch
   * handler; returns those that succeeded.
   */
  private async executeAll(jobs: ClaimedJob[]): Promise<Set<ClaimedJob>> {
    const done = new Set<ClaimedJob>();
    const runAlone = async (group: ClaimedJob[]) => {
      const results = await Promise.all(group.map((job) => this.execute(job)));
      group.forEach((job, i) => results[i] && done.add(job));
    };
    await Promise.all(
      [...groupBy(jobs, (job) => `${job.kind} ${job.lateMs}`)].map(async ([, group]) => {
        const { kind } = group[0];
        const batch = this.batchHandlers.get(kind);
        if (!batch || group.length === 1) return runAlone(group);
        try {
          await batch(group);
          group.forEach((job) => done.add(job));
        } catch (error) {
          this.options.log.warn({ kind, jobs: group.length, err: error }, 'job batch failed; running its jobs one by one');
          await runAlone(group);
        }
      }),
    );
    return done;
  }

  /** Runs one job; true when it succeeded (the caller deletes succeeded jobs in one statement). */
  private async execute(job: ClaimedJob): Promise<boolean> {
    const { db } = this.options.database;
    const handler = this.handlers.get(job.kind);
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(job);
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const nowMs = this.options.clock.realNowMs();
      const dead = job.attempts >= job.maxAttempts;
      this.options.log[dead ? 'error' : 'warn']({ jobId: job.id, kind: job.kind, attempt: job.attempts, err: error }, 'job failed');
      await db
        .updateTable('jobs')
        .set({
          locked_until: null,
          last_error: message.slice(0, 2000),
          due_at: new Date(nowMs + retryDelayMs(job.attempts)),
          dead_at: dead ? new Date(nowMs) : null,
        })
        .where(ofThisClaim([job]))
        .execute();
      return false;
    }
  }
}
