import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { enqueueJobs, platformAsOfDue, type ClaimedJob, type JobRunner, type JobSpec } from '../../core/jobs.js';
import type { Database, Trx } from '../../db/database.js';
import type { LedgerService } from '../ledger/service.js';
import type { RailEvent, RailPlan, RailRequest } from '../rails/rail.js';
import { railFor } from '../rails/sandbox-rail.js';
import { railFailureReason, type FailureDetail, type TransactionStatus } from '../transactions/lifecycle.js';
import type { TransactionRecord, TransactionService } from '../transactions/service.js';
import { transact } from '../../db/transact.js';
import { groupBy } from '../../core/collections.js';

/** Re-drives a transfer whose initiation never got recorded (the process died between the two). */
export const DRIVE_JOB = 'transfers.drive';
/** Applies one delayed step of a rail plan (a completion or failure the rail reports later). */
export const STEP_JOB = 'transfers.step';
/**
 * How long after acceptance the recovery job looks at a transfer (platform clock). The request
 * itself normally initiates within milliseconds, so by then the job finds nothing to do.
 */
export const RECOVERY_LEASE_MS = 10_000;

/** What initiating (or re-initiating) a transfer at the rail needs, kept in the recovery job. */
export interface Initiation {
  transactionId: string;
  operation: 'TRANSFER_OUT' | 'TRANSFER_IN';
  identifier: string;
  accountType: string;
  currency: string;
  amount: number;
}

export interface TransferDriverDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  ledger: LedgerService;
  transactions: TransactionService;
  jobs: JobRunner;
  platformOf: (id: string) => Promise<PlatformRef | undefined>;
}

/** What the rail answered when asked to start a transfer: its plan, or the error it threw. */
export type RailAnswer = { plan: RailPlan } | { error: unknown };

/** What a step job carries: which transfer, its currency, and what the rail reports. */
interface StepPayload {
  transactionId: string;
  currency: string;
  event: RailEvent;
}

const stepOf = (job: ClaimedJob): StepPayload => job.payload as unknown as StepPayload;

/** The internal accounts whose holds resolving these transfers out posts or voids: their sources. */
const heldAccounts = (records: TransactionRecord[]): string[] => records.flatMap((r) => (r.source.accountId ? [r.source.accountId] : []));

/** The failure detail recorded when the rail refuses to start a payment. */
function refusalDetail(error: ServiceError): FailureDetail {
  return error.code === 'NOT_IMPLEMENTED' ? 'NO_RAIL_CONFIGURED' : 'EXECUTION_FAILED';
}

/**
 * Moves transfers along what the rail reports. Every step is a guarded status change (it applies
 * only from the statuses that precede it) with its ledger effect in the same transaction, so a
 * retried job or a request racing its own recovery job never applies anything twice.
 */
export function createTransferDriver(deps: TransferDriverDeps) {
  const { database, clock, ledger, transactions } = deps;

  function railRequest(platform: PlatformRef, i: Initiation): RailRequest {
    return { platform, operation: i.operation, transactionId: i.transactionId, identifier: i.identifier, accountType: i.accountType, currency: i.currency, amount: i.amount };
  }

  async function settlementAccount(platform: PlatformRef, currency: string): Promise<string> {
    return ledger.systemAccount(platform.id, currency, 'RAIL_SETTLEMENT');
  }

  /** Ledger side of a completion: a transfer out posts its hold; a transfer in credits the account. */
  async function settle(trx: Trx, platform: PlatformRef, record: TransactionRecord, settlement: string): Promise<void> {
    if (record.type === 'OUTGOING') {
      await ledger.resolve(trx, platform, { transactionId: record.id, accounts: heldAccounts([record]) }, 'POST');
      return;
    }
    const leg = { debit: settlement, credit: record.destination.accountId!, amount: record.receivedAmount, code: 'TRANSFER_IN' };
    await ledger.record(trx, platform, [leg], record.id);
  }

  /** Applies one rail event from the given statuses; undefined when the transfer was elsewhere. */
  async function applyEvent(
    trx: Trx,
    platform: PlatformRef,
    id: string,
    event: RailEvent,
    from: TransactionStatus[],
    settlement: string,
  ): Promise<TransactionRecord | undefined> {
    if (event.kind === 'COMPLETED') {
      const done = await transactions.transition(trx, platform, id, 'COMPLETED', { settledAt: clock.now(platform) }, { from });
      if (done) await settle(trx, platform, done, settlement);
      return done;
    }
    if (event.kind === 'FAILED') return fail(trx, platform, id, event.detail, from);
    throw new Error(`a transfer does not expect the rail event ${event.kind}`);
  }

  /** Fails a transfer and releases its hold (transfers in hold nothing). */
  async function fail(trx: Trx, platform: PlatformRef, id: string, detail: FailureDetail, from: TransactionStatus[]): Promise<TransactionRecord | undefined> {
    const current = await transactions.find(trx, platform.id, id);
    if (!current) return undefined;
    const failureReason = railFailureReason(current.type);
    const failed = await transactions.transition(trx, platform, id, 'FAILED', { failureReason, failureDetail: detail }, { from });
    if (failed?.type === 'OUTGOING') await ledger.resolve(trx, platform, { transactionId: id, accounts: heldAccounts([failed]) }, 'VOID');
    return failed;
  }

  /**
   * Runs `apply` (a rail event applied from `from`) in a transaction of its own. A transfer in
   * credits its account only when it completes, so other credits since it was accepted may leave
   * no room under the balance limit: the ledger refuses the credit, and the transfer fails
   * instead of retrying a credit that cannot post.
   */
  async function applyOrFailOverLimit(
    platform: PlatformRef,
    id: string,
    from: TransactionStatus[],
    apply: (trx: Trx) => Promise<TransactionRecord | undefined>,
  ): Promise<TransactionRecord | undefined> {
    try {
      return await transact(database.db, apply);
    } catch (error) {
      if (!ledger.isOverBalanceLimit(error)) throw error;
      return transact(database.db, (trx) => fail(trx, platform, id, 'BALANCE_LIMIT', from));
    }
  }

  /** One job per step, each due its `afterMs` from now (platform clock). */
  function stepJobs(platform: PlatformRef, i: Initiation, steps: RailPlan['steps']): JobSpec[] {
    const nowMs = clock.now(platform).getTime();
    return steps.map((step) => ({
      kind: STEP_JOB,
      payload: { transactionId: i.transactionId, currency: i.currency, event: step.event },
      runAt: new Date(nowMs + step.afterMs),
    }));
  }

  const inOrder = (plan: RailPlan) => [...plan.steps].sort((a, b) => a.afterMs - b.afterMs);

  /**
   * Records a fresh plan for a PENDING transfer: a step due at once (afterMs 0) moves it straight
   * to that outcome; otherwise it becomes PROCESSING and each later step gets a job at its time.
   * Undefined when the transfer was no longer PENDING (someone else recorded the plan).
   */
  async function applyPlan(trx: Trx, platform: PlatformRef, i: Initiation, plan: RailPlan, settlement: string): Promise<TransactionRecord | undefined> {
    const steps = inOrder(plan);
    const immediate = steps[0]?.afterMs <= 0 ? steps[0] : undefined;
    const record = immediate
      ? await applyEvent(trx, platform, i.transactionId, immediate.event, ['PENDING'], settlement)
      : await transactions.transition(trx, platform, i.transactionId, 'PROCESSING', {}, { from: ['PENDING'] });
    if (!record) return undefined;
    if (record.status !== 'PROCESSING') return record;
    await enqueueJobs(trx, platform, stepJobs(platform, i, steps.filter((step) => step !== immediate)), clock);
    return record;
  }

  async function ask(platform: PlatformRef, i: Initiation): Promise<RailAnswer> {
    try {
      return { plan: await railFor(platform).initiate(railRequest(platform, i)) };
    } catch (error) {
      return { error };
    }
  }

  /**
   * A simulated rail's answer, asked before the transfer is accepted (the sandbox rail reaches
   * nothing, so asking early has no effect); undefined for a real rail, which is asked only once
   * the transfer is committed.
   */
  async function askAhead(platform: PlatformRef, i: Initiation): Promise<RailAnswer | undefined> {
    return railFor(platform).simulated ? ask(platform, i) : undefined;
  }

  /**
   * The step jobs of an answer whose plan has nothing due at once, for a transfer accepted
   * straight into PROCESSING; null when there is an outcome to apply after acceptance.
   */
  function laterSteps(platform: PlatformRef, i: Initiation, answer: RailAnswer | undefined): JobSpec[] | null {
    if (!answer || !('plan' in answer)) return null;
    const steps = inOrder(answer.plan);
    return steps.length > 0 && steps[0].afterMs > 0 ? stepJobs(platform, i, steps) : null;
  }

  /** The job that re-drives the transfer if its initiation is never recorded; written with the transfer. */
  function recoveryJob(platform: PlatformRef, i: Initiation): JobSpec {
    return { kind: DRIVE_JOB, payload: { ...i }, runAt: new Date(clock.now(platform).getTime() + RECOVERY_LEASE_MS) };
  }

  /**
   * Starts an accepted (PENDING) transfer at the rail, outside any database transaction (or takes
   * the rail's `answer` when it was asked ahead), then records the plan. A rail that refuses fails
   * the transfer (releasing its hold). Returns the transfer as it now stands, undefined when
   * another worker recorded the plan first, or UNREACHABLE when the rail could not be asked (the
   * transfer stays PENDING for the recovery job).
   */
  async function start(platform: PlatformRef, i: Initiation, answer?: RailAnswer): Promise<TransactionRecord | 'UNREACHABLE' | undefined> {
    const settlement = await settlementAccount(platform, i.currency);
    const asked = answer ?? (await ask(platform, i));
    if ('error' in asked) {
      const { error } = asked;
      if (!(error instanceof ServiceError)) {
        deps.log.warn({ err: error, transactionId: i.transactionId }, 'payment rail unreachable; the recovery job will retry');
        return 'UNREACHABLE';
      }
      return transact(database.db, (trx) => fail(trx, platform, i.transactionId, refusalDetail(error), ['PENDING']));
    }
    return applyOrFailOverLimit(platform, i.transactionId, ['PENDING'], (trx) => applyPlan(trx, platform, i, asked.plan, settlement));
  }

  /** Request path: start the transfer and return it as it stands afterwards. */
  async function initiate(platform: PlatformRef, i: Initiation, answer?: RailAnswer): Promise<TransactionRecord> {
    const started = await start(platform, i, answer);
    if (started && started !== 'UNREACHABLE') return started;
    return transactions.require(database.db, platform.id, i.transactionId);
  }

  /** Asks the rail now (real time, not as of the job's due time): it is not a step of the rail's plan. */
  async function onRecovery(job: ClaimedJob): Promise<void> {
    const platform = job.platformId ? await deps.platformOf(job.platformId) : undefined;
    if (!platform) return;
    const i = job.payload as unknown as Initiation;
    const record = await transactions.find(database.db, platform.id, i.transactionId);
    if (record?.status !== 'PENDING') return;
    if ((await start(platform, i)) !== 'UNREACHABLE') return;
    // Retried with backoff by the job runner; after the last try the transfer fails and its hold goes.
    if (job.attempts < job.maxAttempts) throw new Error(`transfer ${i.transactionId}: the payment rail could not be reached`);
    await transact(database.db, (trx) => fail(trx, platform, i.transactionId, 'EXECUTION_FAILED', ['PENDING']));
  }

  async function onStep(job: ClaimedJob): Promise<void> {
    const platform = await platformAsOfDue(job, deps.platformOf);
    if (!platform) return;
    const { transactionId, currency, event } = stepOf(job);
    const settlement = await settlementAccount(platform, currency);
    await applyOrFailOverLimit(platform, transactionId, ['PROCESSING'], (trx) => applyEvent(trx, platform, transactionId, event, ['PROCESSING'], settlement));
  }

  /**
   * Step jobs claimed together: the completions of each platform settle in one transaction (one
   * update for the transactions, one ledger call posting every outgoing hold); failures run as
   * their own jobs. A completion whose transfer is no longer PROCESSING changes nothing, as alone.
   */
  async function onSteps(batch: ClaimedJob[]): Promise<void> {
    const completions = batch.filter((job) => stepOf(job).event.kind === 'COMPLETED');
    const others = batch.filter((job) => !completions.includes(job));
    await Promise.all([
      ...[...groupBy(completions, (job) => job.platformId)].map(([, jobs]) => settleCompletions(jobs)),
      ...others.map(onStep),
    ]);
  }

  /** Completions of one platform, claimed in one due-time window (the first job's time stands for all). */
  async function settleCompletions(jobs: ClaimedJob[]): Promise<void> {
    const platform = await platformAsOfDue(jobs[0], deps.platformOf);
    if (!platform) return;
    const steps = jobs.map(stepOf);
    const settlements = new Map(await Promise.all([...new Set(steps.map((s) => s.currency))].map(async (c) => [c, await settlementAccount(platform, c)] as const)));
    await transact(database.db, async (trx) => {
      const ids = steps.map((s) => s.transactionId);
      const done = await transactions.transitionAll(trx, platform, ids, 'COMPLETED', { settledAt: clock.now(platform) }, { from: ['PROCESSING'] });
      const outgoing = done.filter((r) => r.type === 'OUTGOING');
      if (outgoing.length > 0) await ledger.resolve(trx, platform, { transactionIds: outgoing.map((r) => r.id), accounts: heldAccounts(outgoing) }, 'POST');
      for (const record of done.filter((r) => r.type === 'INCOMING')) await settle(trx, platform, record, settlements.get(record.receivedCurrency)!);
    });
  }

  return {
    recoveryJob,
    askAhead,
    laterSteps,
    initiate,
    settlementAccount,
    /** Registers the job handlers (once, from the composition root). */
    register(): void {
      deps.jobs.register(DRIVE_JOB, onRecovery);
      deps.jobs.register(STEP_JOB, onStep);
      deps.jobs.registerBatch(STEP_JOB, onSteps);
    },
  };
}

export type TransferDriver = ReturnType<typeof createTransferDriver>;
