import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import { sql, type RawBuilder } from 'kysely';
import { commitWrites, type ServiceContext } from '../../core/context.js';
import { ServiceError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { jobRows, type JobRunner, type JobSpec } from '../../core/jobs.js';
import { outboxWrites } from '../../core/outbox.js';
import { isUnmetExpectation, type Database } from '../../db/database.js';
import { withRowChecks, type RowChecks } from '../../core/row-checks.js';
import type { Clause } from '../../db/one-statement.js';
import type { Batching } from '../../db/write-batcher.js';
import type { AccountService } from '../accounts/service.js';
import type { SenderGate } from '../compliance/sender-gate.js';
import type { CustomerService } from '../customers/service.js';
import type { ExternalAccountService } from '../external-accounts/service.js';
import type { LedgerService } from '../ledger/service.js';
import type { Platform, PlatformService } from '../platform/service.js';
import { railFor, unconfiguredRail } from '../rails/sandbox-rail.js';
import type { TransactionView } from '../transactions/schemas.js';
import { presentTransaction, type NewTransaction, type TransactionService } from '../transactions/service.js';
import { createTransferDriver, type Initiation } from './driver.js';
import { resolveParties, type Direction, type TransferParties } from './parties.js';
import type { TransferInput } from './schemas.js';

export type { TransferInput } from './schemas.js';

export interface TransferServiceDeps {
  database: Database;
  clock: Clock;
  log: Logger;
  ledger: LedgerService;
  transactions: TransactionService;
  accounts: Pick<AccountService, 'getAccount'>;
  externalAccounts: Pick<ExternalAccountService, 'findExternalAccount'>;
  customers: Pick<CustomerService, 'requireCustomer'>;
  platforms: Pick<PlatformService, 'get'>;
  jobs: JobRunner;
  /** The send rule: unverified customers of non-regulated platforms cannot send (403 USER_NOT_READY). */
  senderGate: SenderGate;
}

/** The transaction row of a new transfer, before the rail has been asked. */
function draftOf(parties: TransferParties, agentId: string | undefined): NewTransaction {
  const { internal, external, currency, amount, customer } = parties;
  const outgoing = parties.direction === 'OUTGOING';
  const internalSide = { accountId: internal.id, currency };
  const externalSide = { accountId: external.id, currency };
  return {
    type: parties.direction,
    status: 'PENDING',
    customerId: customer?.id ?? null,
    platformCustomerId: customer?.platformCustomerId ?? null,
    source: { sourceType: 'ACCOUNT', ...(outgoing ? internalSide : externalSide) },
    destination: { destinationType: 'ACCOUNT', ...(outgoing ? externalSide : internalSide) },
    sentAmount: outgoing ? amount : null,
    sentCurrency: outgoing ? currency : null,
    receivedAmount: amount,
    receivedCurrency: currency,
    exchangeRate: null,
    fees: outgoing ? 0 : null,
    quoteId: null,
    description: null,
    counterpartyInformation: null,
    rateDetails: null,
    paymentInstructions: null,
    agentId: agentId ?? null,
  };
}

/**
 * Same-currency transfers between a Corridor internal account and an external account, on the
 * platform's rail. Each transfer commits in two steps around the rail call, which never runs
 * inside a database transaction:
 *
 * 1. accept: the PENDING transaction, the hold on the source (transfers out) and a recovery job,
 *    in one statement (the Idempotency-Key record commits with it);
 * 2. initiate: ask the rail, then record its plan: an immediate outcome at once, otherwise
 *    PROCESSING plus one job per later step.
 *
 * If the process dies between the two, the recovery job initiates the transfer again. The
 * sandbox rail, which reaches nothing, is asked before step 1 instead; when nothing of its plan
 * is due at once, step 1 writes the transfer as PROCESSING with its step jobs and there is no
 * step 2.
 */
export function createTransferService(deps: TransferServiceDeps) {
  const { database, clock, ledger, transactions } = deps;
  const driver = createTransferDriver({ ...deps, platformOf: (id) => deps.platforms.get(id) });

  function requireRail(platform: Platform): void {
    if (railFor(platform) === unconfiguredRail) {
      throw new ServiceError('NOT_IMPLEMENTED', 'no payment rail is configured for this platform, so transfers cannot be made (sandbox platforms use the sandbox rail)');
    }
  }

  function initiationOf(parties: TransferParties): Initiation {
    return {
      transactionId: newId('Transaction'),
      operation: parties.direction === 'OUTGOING' ? 'TRANSFER_OUT' : 'TRANSFER_IN',
      identifier: parties.external.identifier,
      accountType: parties.external.accountType,
      currency: parties.currency,
      amount: parties.amount,
    };
  }

  /**
   * Step 1: the transaction, its events, its jobs and the hold (transfers out), committed together
   * as one statement (with the Idempotency-Key record, which answers a replay with the transfer as
   * accepted): the ledger call locks the source account's row only for that statement. An
   * overdraft fails the statement, and nothing of it stays; so does a change to a row in `checks`.
   * Concurrent transfers are committed together (`Batching`). With `steps` (a simulated rail's
   * plan, nothing due at once) the transfer is accepted straight into PROCESSING with its step
   * jobs, and nothing is left for step 2; otherwise it is PENDING with a recovery job.
   */
  async function accept(ctx: ServiceContext<Platform>, parties: TransferParties, i: Initiation, settlement: string, steps: JobSpec[] | null, checks: RowChecks) {
    const { platform } = ctx;
    const draft = { ...draftOf(parties, ctx.agentId), id: i.transactionId };
    const moved = steps && transactions.creationMovedTo(platform, draft, 'PROCESSING');
    const { record, writes } = moved ?? transactions.creation(platform, draft);
    const jobs = moved ? steps : [driver.recoveryJob(platform, i)];
    const all: Clause[] = [...writes, ...outboxWrites({ jobs: jobRows(platform, jobs, clock) })];
    const unchanged = sql`corridor_expect(${checks.holds()}, 'a row this transfer was decided on changed')`;
    let finish: RawBuilder<unknown> = sql`select ${unchanged}`;
    let batch: Batching = { kind: 'transfer-in' };
    if (parties.direction === 'OUTGOING') {
      const holdLeg = { debit: parties.internal.id, credit: settlement, amount: parties.amount, pending: true, code: 'TRANSFER_OUT' };
      const hold = await ledger.recordWithin(database.db, platform, [holdLeg], sql<string>`${record.id}`);
      if (!hold) throw new Error('the balance events of a transfer hold could not be prepared');
      all.push({ as: 'balances', query: hold.call }, ...hold.writes);
      finish = sql`select ${unchanged}, (select count(*) from balances)`;
      // Transfers out of one account queue on its balance row: together, they take it once.
      batch = { kind: 'transfer-out', locks: ledger.locksOf([holdLeg]) };
    }
    try {
      await commitWrites(ctx, all, presentTransaction(record, platform.id), { finish, batch, provisional: !moved });
    } catch (error) {
      throw isUnmetExpectation(error) ? error : ledger.explainError(error);
    }
    return { record, started: moved !== null };
  }

  /**
   * A transfer in that could not be credited now is refused now. Its credit waits for the rail, so
   * other credits meanwhile can still leave it no room: then it fails (`BALANCE_LIMIT`, driver.ts).
   */
  async function refuseOverBalanceLimit(parties: TransferParties, settlement: string): Promise<void> {
    const credit = { debit: settlement, credit: parties.internal.id, amount: parties.amount, pending: false, code: 'TRANSFER_IN' };
    if (!(await ledger.fitsUnderLimit(database.db, [credit]))) throw ledger.balanceLimitError();
  }

  async function transfer(ctx: ServiceContext<Platform>, direction: Direction, input: TransferInput): Promise<TransactionView> {
    return withRowChecks('transfer', (checks) => transferChecked(ctx, direction, input, checks));
  }

  async function transferChecked(ctx: ServiceContext<Platform>, direction: Direction, input: TransferInput, checks: RowChecks): Promise<TransactionView> {
    const { platform } = ctx;
    const parties = await resolveParties(deps, platform, direction, input, checks);
    if (direction === 'OUTGOING' && parties.customer) deps.senderGate.check(platform, parties.customer);
    requireRail(platform);
    // System accounts are created in their own transaction, so before ours opens.
    const settlement = await driver.settlementAccount(platform, parties.currency);
    if (direction === 'INCOMING') await refuseOverBalanceLimit(parties, settlement);
    const initiation = initiationOf(parties);
    const answer = await driver.askAhead(platform, initiation);
    const accepted = await accept(ctx, parties, initiation, settlement, driver.laterSteps(platform, initiation, answer), checks);
    const record = accepted.started ? accepted.record : await driver.initiate(platform, initiation, answer);
    return presentTransaction(record, platform.id);
  }

  return {
    /** POST /transfer-out: internal account → external account of the same owner and currency. */
    transferOut: (ctx: ServiceContext<Platform>, input: TransferInput) => transfer(ctx, 'OUTGOING', input),
    /** POST /transfer-in: pulls from an external account into an internal account of the same owner and currency. */
    transferIn: (ctx: ServiceContext<Platform>, input: TransferInput) => transfer(ctx, 'INCOMING', input),
    /** 501 unless the platform has a payment rail (agents check it before an action waits for approval). */
    requireRail,
    /** Registers the transfer jobs with the runner (once, from the composition root). */
    registerJobs: () => driver.register(),
  };
}

export type TransferService = ReturnType<typeof createTransferService>;
